package planfs

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"fleetwatch/model"
)

// Repairs says what Repair changed, and what it found but leaves to a person.
type Repairs struct {
	Fixed   []string
	Unfixed []model.Warning
}

// Repair finishes or undoes what killed workers left half done:
//   - a claim whose claimer provably died (its pid gone in this boot and pid
//     namespace) after moving the plan but before writing its in-progress
//     lease is undone: the plan goes back, claimable at once, since no agent
//     ever got its path; a claimer we cannot see (another host or container,
//     or anchor) gets its claim finished (the in-progress lease written from
//     the ready-path one); a claim whose lease was written stands;
//   - a ready-path lease left by a claimer that is gone (provably dead, or
//     older than a short grace) is removed; an empty or unreadable one only
//     once older than the grace too, since it may be anchor's claim in
//     flight (anchor creates the file, then writes it);
//   - a plan left in two lanes at once by an interrupted link+unlink move
//     keeps only one link (in-progress/ wins, else the earlier lane);
//   - a lease whose plan file is gone is removed (an unreadable one once
//     older than the grace);
//   - an in-progress plan without a lease is reported: recover takes it.
//
// Live claims are never touched: a ready-path lease counts as left behind
// only by the rules above. Repair holds the lease lock while it works, and
// skips its turn when another process holds it.
func (t *Tree) Repair(snap *model.Snapshot) Repairs {
	var r Repairs
	// Repair is opportunistic: when another process holds the lock, the
	// next run repairs instead of this one waiting.
	unlock, err := t.lockLeases(100 * time.Millisecond)
	if err != nil {
		r.Unfixed = append(r.Unfixed, model.Warning{File: ".leases/", Message: "repair skipped this run: " + err.Error()})
		return r
	}
	defer unlock()
	r.Fixed = t.unlinkTwins(snap)
	plans := make(map[string]bool, len(snap.Plans))
	for i := range snap.Plans {
		plans[snap.Plans[i].Rel] = true
	}
	for i := range snap.Leases {
		l := &snap.Leases[i]
		lane, name, err := SplitRel(l.Rel)
		if err != nil {
			continue
		}
		switch {
		case lane.Ready():
			if note := t.repairReadyLease(l, name, plans); note != "" {
				r.Fixed = append(r.Fixed, note)
			}
		case !plans[l.Rel] && !t.exists(l.Rel) && t.ReadLease(l.Rel) != nil && (l.Corrupt == "" || t.now()-l.ModTime > claimGrace):
			t.removeLeaseIf(l.Rel, l)
			r.Fixed = append(r.Fixed, "removed lease "+l.File+": its plan "+l.Rel+" is gone")
		}
	}
	t.sweepLeaseTemps()
	for i := range snap.Plans {
		p := &snap.Plans[i]
		if p.Lane == model.InProgress && t.exists(p.Rel) && t.ReadLease(p.Rel) == nil && !t.claimInFlight(p.Name) {
			r.Unfixed = append(r.Unfixed, model.Warning{File: p.Rel, Message: "in progress without a lease; `fleetwatch recover " + p.Rel + "` takes it over"})
		}
	}
	return r
}

func (t *Tree) repairReadyLease(l *model.Lease, name string, plans map[string]bool) string {
	claimed := path.Join(string(model.InProgress), name)
	if t.finishedClaim(l) {
		t.removeLeaseIf(l.Rel, l) // a leftover of a made claim: nothing to report
		return ""
	}
	stale := t.abandoned(l) || l.Corrupt == "" && !l.Active(t.now())
	switch {
	case !stale:
		return "" // a live claim
	case l.Corrupt != "" && l.Corrupt != model.ErrEmptyLease.Error() && plans[l.Rel]:
		return "" // garbage on a present plan: check reports it, recover clears it
	}
	// The snapshot may be older than the claimer's last step. Read the lease
	// again only now, after judging its claimer gone, so what we read is final.
	if cur := t.ReadLease(l.Rel); cur == nil || !sameHolder(cur, l) {
		return ""
	}
	if l.Corrupt == "" && !plans[l.Rel] && !t.exists(l.Rel) && t.exists(claimed) && t.ReadLease(claimed) == nil {
		return t.repairClaim(l, claimed)
	}
	t.removeLeaseIf(l.Rel, l)
	if !plans[l.Rel] {
		return "removed left-over lease " + l.File
	}
	t.appendEvent(Event{Event: "repair", Slug: model.SlugOf(name), From: l.Rel, To: l.Rel, AgentID: l.AgentID, Reason: "stale ready-path lease removed"})
	return "removed " + l.AgentID + "'s abandoned lease on " + l.Rel + "; it is claimable again"
}

// repairClaim deals with a claim interrupted after its move and before its
// in-progress lease: ready is the claim's ready-path lease.
func (t *Tree) repairClaim(ready *model.Lease, claimed string) string {
	slug := model.SlugOf(path.Base(claimed))
	// Without its in-progress lease the claim never reached the point where
	// it could return the path: with its claimer provably dead, no agent has
	// the plan. (Once that lease is written the claim counts as made, even if
	// its claimer then died: it keeps the plan until the lease expires.)
	if t.claimerGone(ready) {
		if err := moveNoReplace(t.Abs(claimed), t.Abs(ready.Rel)); err == nil {
			t.removeLeaseIf(ready.Rel, ready)
			t.appendEvent(Event{Event: "repair", Slug: slug, From: claimed, To: ready.Rel, AgentID: ready.AgentID, Reason: "claim undone: its claimer died before it returned"})
			return "undid " + ready.AgentID + "'s interrupted claim: " + ready.Rel + " is claimable again"
		}
	}
	finished := *ready
	finished.Plan, finished.Origin = claimed, ready.Rel
	if err := t.linkLeaseExcl(claimed, finished); err != nil {
		return ""
	}
	t.removeLeaseIf(ready.Rel, ready)
	t.appendEvent(Event{Event: "repair", Slug: slug, From: ready.Rel, To: claimed, AgentID: ready.AgentID, Origin: ready.Rel, Reason: "claim finished for a claimer that stopped"})
	return "finished " + ready.AgentID + "'s interrupted claim of " + ready.Rel + ": lease now on " + claimed
}

// unlinkTwins finds plans of one name in two lanes that are one file (a
// link+unlink move cut short) and removes the extra link; no content is lost.
func (t *Tree) unlinkTwins(snap *model.Snapshot) []string {
	byName := make(map[string][]*model.Plan, len(snap.Plans))
	var dup []string
	for i := range snap.Plans {
		p := &snap.Plans[i]
		byName[p.Name] = append(byName[p.Name], p)
		if len(byName[p.Name]) == 2 {
			dup = append(dup, p.Name)
		}
	}
	var notes []string
	for _, name := range dup {
		ps := byName[name]
		keep := ps[0]
		for _, p := range ps {
			if p.Lane == model.InProgress {
				keep = p
			}
		}
		keepInfo, err := os.Lstat(t.Abs(keep.Rel))
		// A link is young while its move is still running: leave it to the mover.
		if err != nil || t.now()-ctime(keepInfo) < claimGrace {
			continue
		}
		for _, p := range ps {
			if p == keep {
				continue
			}
			if fi, err := os.Lstat(t.Abs(p.Rel)); err == nil && os.SameFile(fi, keepInfo) && os.Remove(t.Abs(p.Rel)) == nil {
				notes = append(notes, "finished an interrupted move: "+p.Rel+" was the same file as "+keep.Rel)
			}
		}
	}
	return notes
}

// sweepLeaseTemps deletes the dot-files verbs make in .leases/ (temp leases,
// leases taken aside) once a crash has left them behind. The lock file stays.
func (t *Tree) sweepLeaseTemps() {
	dir := filepath.Join(t.Plans, ".leases")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, ".") || name == lockFile || e.IsDir() {
			continue
		}
		// ctime, not mtime: a rename keeps a lease's mtime but not its ctime.
		if fi, err := e.Info(); err == nil && t.now()-ctime(fi) > claimGrace {
			os.Remove(filepath.Join(dir, name))
		}
	}
}

// ctime is when the file's inode last changed (a link, rename or write), in
// Unix seconds.
func ctime(fi os.FileInfo) float64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return float64(st.Ctim.Sec) + float64(st.Ctim.Nsec)/1e9
	}
	return unixSeconds(fi.ModTime())
}
