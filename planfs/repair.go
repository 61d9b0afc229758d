package planfs

import (
	"os"
	"path"
	"path/filepath"
	"strings"

	"fleetwatch/model"
)

// Repairs says what Repair changed, and what it found but leaves to a person.
type Repairs struct {
	Fixed, Unfixed []string
}

// Repair finishes or undoes what dead claimers left half done:
//   - a ready-path lease whose plan already sits in in-progress/ becomes that
//     plan's in-progress lease (the claimer died before writing it), or is
//     dropped if the in-progress lease exists;
//   - a ready-path lease left by a dead claimer (same host and pid gone, or
//     older than a short grace) is removed, so the plan is claimable again;
//   - a lease whose plan file is gone is removed;
//   - an in-progress plan without a lease is reported: recover takes it.
//
// Live claims are never touched: a ready-path lease counts as left behind
// only by the rules above.
func (t *Tree) Repair(snap *model.Snapshot) Repairs {
	var r Repairs
	plans := make(map[string]bool, len(snap.Plans))
	for i := range snap.Plans {
		plans[snap.Plans[i].Rel] = true
	}
	leased := map[string]bool{}
	for i := range snap.Leases {
		leased[snap.Leases[i].Rel] = true
	}
	for i := range snap.Leases {
		l := &snap.Leases[i]
		lane, name, err := SplitRel(l.Rel)
		if err != nil {
			continue
		}
		switch {
		case lane.Ready():
			if note := t.repairReadyLease(l, lane, name, plans, leased); note != "" {
				r.Fixed = append(r.Fixed, note)
			}
		case !plans[l.Rel] && !t.exists(l.Rel) && t.LeaseFor(l.Rel) != nil:
			t.removeLeaseIf(l.Rel, l)
			r.Fixed = append(r.Fixed, "removed lease "+l.File+": its plan "+l.Rel+" is gone")
		}
	}
	t.sweepLeaseTemps()
	for i := range snap.Plans {
		p := &snap.Plans[i]
		if p.Lane == model.InProgress && !leased[p.Rel] && t.LeaseFor(p.Rel) == nil {
			r.Unfixed = append(r.Unfixed, p.Rel+": in progress without a lease; `fleetwatch recover "+p.Rel+"` takes it over")
		}
	}
	return r
}

func (t *Tree) repairReadyLease(l *model.Lease, lane model.Lane, name string, plans, leased map[string]bool) string {
	stale := t.abandoned(l) || l.Corrupt == "" && !l.Active(t.now())
	if !stale || l.Corrupt != "" && plans[l.Rel] {
		return "" // live, or a corrupt lease on a present plan: check reports it, recover clears it
	}
	claimed := path.Join(string(model.InProgress), name)
	if !plans[l.Rel] && !t.exists(l.Rel) && t.exists(claimed) && !leased[claimed] && l.Corrupt == "" && t.LeaseFor(claimed) == nil {
		held := *l
		held.Plan, held.Origin = claimed, l.Rel
		if err := t.linkLeaseExcl(claimed, held); err != nil {
			return ""
		}
		t.removeLeaseIf(l.Rel, l)
		t.appendEvent(Event{Event: "repair", Slug: model.SlugOf(name), From: l.Rel, To: claimed, AgentID: l.AgentID, Origin: l.Rel, Reason: "claim finished for a dead claimer"})
		return "finished " + l.AgentID + "'s interrupted claim of " + l.Rel + ": lease now on " + claimed
	}
	if t.LeaseFor(l.Rel) == nil {
		return ""
	}
	t.removeLeaseIf(l.Rel, l)
	if !plans[l.Rel] {
		return "removed left-over lease " + l.File
	}
	t.appendEvent(Event{Event: "repair", Slug: model.SlugOf(name), From: l.Rel, To: l.Rel, AgentID: l.AgentID, Reason: "stale ready-path lease removed"})
	return "removed " + l.AgentID + "'s abandoned lease on " + l.Rel + "; it is claimable again"
}

// sweepLeaseTemps deletes the dot-files verbs make in .leases/ (temp leases,
// leases taken aside, recover locks) once a crash has left them behind.
func (t *Tree) sweepLeaseTemps() {
	dir := filepath.Join(t.Plans, ".leases")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, ".") || e.IsDir() {
			continue
		}
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, ".lock") {
			if l := t.readLeaseFile(p); l.Corrupt == "" && t.abandoned(&l) {
				os.Remove(p)
			}
			continue
		}
		if fi, err := e.Info(); err == nil && t.now()-float64(fi.ModTime().UnixNano())/1e9 > claimGrace {
			os.Remove(p)
		}
	}
}
