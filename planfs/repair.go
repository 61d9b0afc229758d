package planfs

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
)

// Repairs says what Repair changed (or, from Preview, what the next claim
// will change), and what it found but leaves to a person.
type Repairs struct {
	Fixed   []string
	Will    []model.Warning
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
	// A viewer's tree never repairs; the next operator or worker does.
	if err := t.Writable(); err != nil {
		r.Unfixed = append(r.Unfixed, model.Warning{File: ".leases/", Message: "repair skipped: " + err.Error()})
		return r
	}
	// Repair is opportunistic: when another process holds the lock, the
	// next run repairs instead of this one waiting.
	unlock, err := t.lockLeases(100 * time.Millisecond)
	if err != nil {
		r.Unfixed = append(r.Unfixed, model.Warning{File: ".leases/", Message: "repair skipped this run: " + err.Error()})
		return r
	}
	defer unlock()
	rp := &repairer{t: t}
	rp.run(snap)
	t.sweepLeaseTemps()
	return Repairs{Fixed: rp.did, Unfixed: rp.unfixed}
}

// Preview is Repair without the writes, for the faces that only read
// (`--list`, board, check, status, the UI): it returns snap as Repair would
// leave it, so they rank plans as the next claim will, with a warning per
// repair saying what the next claim does (also in the returned Repairs'
// Will). snap itself is not changed.
func (t *Tree) Preview(snap *model.Snapshot) (*model.Snapshot, Repairs) {
	rp := &repairer{t: t, dry: true, gone: map[string]bool{}, moved: map[string]string{}, dropped: map[string]bool{}}
	rp.run(snap)
	// A symlinked write path is no repair: verbs refuse until a person
	// removes it. Reported here so every read-only face shows it.
	links := t.SymlinkProblems()
	found := Repairs{Will: rp.will, Unfixed: append(rp.unfixed, links...)}
	if len(rp.will) == 0 && len(links) == 0 {
		return snap, found
	}
	out := &model.Snapshot{Warnings: append(append(append([]model.Warning(nil), snap.Warnings...), rp.will...), links...)}
	for _, p := range snap.Plans {
		if rp.gone[p.Rel] {
			continue
		}
		if to, ok := rp.moved[p.Rel]; ok {
			lane := model.Rel(to).Lane()
			p.Rel, p.Lane = to, lane
		}
		out.Plans = append(out.Plans, p)
	}
	for _, l := range snap.Leases {
		if !rp.dropped[l.Rel] {
			out.Leases = append(out.Leases, l)
		}
	}
	out.Leases = append(out.Leases, rp.added...)
	return out, found
}

// repairer decides each repair once, for Repair (which makes it) and
// Preview (which records its effect on a snapshot and says what the next
// claim will do).
type repairer struct {
	t   *Tree
	dry bool

	did     []string        // what Repair did
	unfixed []model.Warning // what neither does
	will    []model.Warning // what the next claim will do (Preview)

	gone    map[string]bool   // plan rels that go away
	moved   map[string]string // plan rel → where it goes
	dropped map[string]bool   // lease rels removed
	added   []model.Lease     // leases written
}

// fixed records one repair: done now, or, in a preview, what the next claim
// does to file.
func (r *repairer) fixed(file, did, will string) {
	if r.dry {
		r.will = append(r.will, model.Warning{File: file, Message: will})
		return
	}
	if did != "" {
		r.did = append(r.did, did)
	}
}

// dropLease removes l (if it is still the same lease) or, in a preview,
// records that it goes.
func (r *repairer) dropLease(l *model.Lease) {
	if r.dry {
		r.dropped[l.Rel] = true
		return
	}
	r.t.removeLeaseIf(l.Rel, l)
}

func (r *repairer) run(snap *model.Snapshot) {
	r.unlinkTwins(snap)
	plans := make(map[string]bool, len(snap.Plans))
	for i := range snap.Plans {
		plans[snap.Plans[i].Rel] = true
	}
	for i := range snap.Leases {
		r.lease(&snap.Leases[i], plans)
	}
	for i := range snap.Plans {
		r.unleasedClaim(&snap.Plans[i])
	}
}

// lease repairs lease l: a ready-path one by readyLease, another whose plan
// is gone (and, when unreadable, older than a claim takes) by dropping it.
func (r *repairer) lease(l *model.Lease, plans map[string]bool) {
	t := r.t
	lane, name, err := SplitRel(l.Rel)
	if err != nil {
		return
	}
	switch {
	case lane.Ready():
		r.readyLease(l, name, plans)
	case !plans[l.Rel] && !t.exists(l.Rel) && t.ReadLease(l.Rel) != nil && (l.Corrupt == "" || t.now()-l.ModTime > claimGrace):
		r.dropLease(l)
		r.fixed(".leases/"+l.File, "removed lease "+l.File+": its plan "+l.Rel+" is gone", "lease of a plan that is gone ("+l.Rel+"); the next claim removes it")
	}
}

// unleasedClaim reports claimed p without a lease, which only recover
// mends.
func (r *repairer) unleasedClaim(p *model.Plan) {
	t := r.t
	if p.Lane == model.InProgress && !r.movedAway(p.Rel) && t.exists(p.Rel) && t.ReadLease(p.Rel) == nil && !t.claimInFlight(p.Name) && !r.leaseAdded(p.Rel) {
		r.unfixed = append(r.unfixed, model.Warning{File: p.Rel, Message: "in progress without a lease; `fleetwatch recover " + p.Rel + "` takes it over"})
	}
}

func (r *repairer) leaseAdded(rel string) bool {
	for _, l := range r.added {
		if l.Rel == rel {
			return true
		}
	}
	return false
}

func (r *repairer) readyLease(l *model.Lease, name string, plans map[string]bool) {
	t := r.t
	if t.finishedClaim(l) {
		r.dropLease(l) // a leftover of a made claim: nothing to report
		return
	}
	if !r.leftOver(l, plans) {
		return
	}
	claimed := path.Join(string(model.InProgress), name)
	if l.Corrupt == "" && !plans[l.Rel] && !t.exists(l.Rel) && t.exists(claimed) && t.ReadLease(claimed) == nil {
		r.interruptedClaim(l, claimed)
		return
	}
	r.dropLease(l)
	r.droppedReady(l, name, plans[l.Rel])
}

// leftOver reports whether ready-path lease l is its claimer's leavings:
// stale, not garbage on a present plan, and still the lease on disk.
func (r *repairer) leftOver(l *model.Lease, plans map[string]bool) bool {
	t := r.t
	stale := t.abandoned(l) || l.Corrupt == "" && !l.Active(t.now())
	switch {
	case !stale:
		return false // a live claim
	case l.Corrupt != "" && l.Corrupt != model.ErrEmptyLease.Error() && plans[l.Rel]:
		return false // garbage on a present plan: check reports it, recover clears it
	}
	// The snapshot may be older than the claimer's last step. Read the lease
	// again only now, after judging its claimer gone, so what we read is final.
	cur := t.ReadLease(l.Rel)
	return cur != nil && sameHolder(cur, l)
}

// droppedReady reports ready-path lease l dropped: a left-over when its
// plan is gone, else an abandoned claim of a plan that is claimable again.
func (r *repairer) droppedReady(l *model.Lease, name string, planThere bool) {
	file := ".leases/" + l.File
	if !planThere {
		r.fixed(file, "removed left-over lease "+l.File, "left-over lease of a claim that is gone; the next claim removes it")
		return
	}
	holder := l.AgentID
	if holder == "" {
		holder = "a claimer that stopped"
	}
	if !r.dry {
		r.t.appendEvent(Event{Event: "repair", Slug: model.SlugOf(name), From: l.Rel, To: l.Rel, AgentID: l.AgentID, Reason: "stale ready-path lease removed"})
	}
	r.fixed(l.Rel, "removed "+l.AgentID+"'s abandoned lease on "+l.Rel+"; it is claimable again", "abandoned by "+holder+": the next claim clears it")
}

// interruptedClaim deals with a claim interrupted after its move and before
// its in-progress lease: ready is the claim's ready-path lease.
func (r *repairer) interruptedClaim(ready *model.Lease, claimed string) {
	t := r.t
	slug := model.SlugOf(path.Base(claimed))
	// Without its in-progress lease the claim never reached the point where
	// it could return the path: with its claimer provably dead, no agent has
	// the plan. (Once that lease is written the claim counts as made, even if
	// its claimer then died: it keeps the plan until the lease expires.)
	if t.claimerGone(ready) {
		if r.dry {
			r.moved[claimed] = ready.Rel
			r.dropLease(ready)
			r.fixed(claimed, "", ready.AgentID+"'s claim was cut short when it died: the next claim puts it back in "+path.Dir(ready.Rel)+"/")
			return
		}
		if err := moveNoReplace(t.Abs(claimed), t.Abs(ready.Rel)); err == nil {
			t.removeLeaseIf(ready.Rel, ready)
			t.appendEvent(Event{Event: "repair", Slug: slug, From: claimed, To: ready.Rel, AgentID: ready.AgentID, Reason: "claim undone: its claimer died before it returned"})
			r.fixed(claimed, "undid "+ready.AgentID+"'s interrupted claim: "+ready.Rel+" is claimable again", "")
			return
		}
	}
	finished := *ready
	finished.Plan, finished.Origin = claimed, ready.Rel
	if r.dry {
		finished.Rel, finished.File = claimed, model.LeaseFileName(claimed)
		r.added = append(r.added, finished)
		r.dropLease(ready)
		r.fixed(claimed, "", ready.AgentID+"'s claim stopped before its lease was written: the next claim writes it")
		return
	}
	if err := t.linkLeaseExcl(claimed, finished); err != nil {
		return
	}
	t.removeLeaseIf(ready.Rel, ready)
	t.appendEvent(Event{Event: "repair", Slug: slug, From: ready.Rel, To: claimed, AgentID: ready.AgentID, Origin: ready.Rel, Reason: "claim finished for a claimer that stopped"})
	r.fixed(claimed, "finished "+ready.AgentID+"'s interrupted claim of "+ready.Rel+": lease now on "+claimed, "")
}

// unlinkTwins finds plans of one name in two lanes that are one file (a
// link+unlink move cut short) and removes the extra link; no content is lost.
func (r *repairer) unlinkTwins(snap *model.Snapshot) {
	byName := make(map[string][]*model.Plan, len(snap.Plans))
	var dup []string
	for i := range snap.Plans {
		p := &snap.Plans[i]
		byName[p.Name] = append(byName[p.Name], p)
		if len(byName[p.Name]) == 2 {
			dup = append(dup, p.Name)
		}
	}
	for _, name := range dup {
		r.unlinkTwinsOf(byName[name])
	}
}

// unlinkTwinsOf removes the links among ps (plans of one name) that are the
// same file as the one kept: the in-progress one, else the first.
func (r *repairer) unlinkTwinsOf(ps []*model.Plan) {
	t := r.t
	keep := ps[0]
	for _, p := range ps {
		if p.Lane == model.InProgress {
			keep = p
		}
	}
	keepInfo, err := os.Lstat(t.Abs(keep.Rel))
	// A link is young while its move is still running: leave it to the mover.
	if err != nil || t.now()-ctime(keepInfo) < claimGrace {
		return
	}
	for _, p := range ps {
		if p == keep {
			continue
		}
		fi, err := os.Lstat(t.Abs(p.Rel))
		if err != nil || !os.SameFile(fi, keepInfo) {
			continue
		}
		if r.dry {
			r.gone[p.Rel] = true
			r.fixed(p.Rel, "", "the same file as "+keep.Rel+" (a move cut short): the next claim removes this link")
		} else if os.Remove(t.Abs(p.Rel)) == nil {
			r.fixed(p.Rel, "finished an interrupted move: "+p.Rel+" was the same file as "+keep.Rel, "")
		}
	}
}

func (r *repairer) movedAway(rel string) bool {
	_, ok := r.moved[rel]
	return ok
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
