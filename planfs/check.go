package planfs

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
)

// Check lints the tree: everything the scan could not read, header lines
// anchor would silently ignore, bad words, unknown or cyclic dependencies,
// duplicate slugs, and leases that are corrupt, orphaned or missing.
func (t *Tree) Check(snap *model.Snapshot) []model.Warning {
	out := append([]model.Warning(nil), snap.Warnings...)
	out = append(out, t.SymlinkProblems()...)
	out = append(out, t.checkPlans(snap)...)
	out = append(out, t.checkLeases(snap)...)
	out = uniqueWarnings(out)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out
}

// checkPlans lints each plan: names no claim can take, a ready plan's empty
// Goal or Done when, unknown or cyclic dependencies, claims without a live lease, and duplicate slugs.
func (t *Tree) checkPlans(snap *model.Snapshot) []model.Warning {
	var out []model.Warning
	deps := model.NewDepIndex(snap).Evaluate(t.History())
	bySlug := map[string][]string{}
	leased := make(map[string]*model.Lease, len(snap.Leases))
	for i := range snap.Leases {
		leased[snap.Leases[i].Rel] = &snap.Leases[i]
	}
	now := t.now()
	for i := range snap.Plans {
		p := &snap.Plans[i]
		if p.Lane != model.Completed {
			bySlug[strings.ToLower(p.Slug)] = append(bySlug[strings.ToLower(p.Slug)], p.Rel)
			out = append(out, claimWarnings(p)...)
		}
		if line, why := p.Header.BlankProblem(); why != "" && p.Lane.Ready() {
			out = append(out, model.Warning{File: p.Rel, Line: line, Message: why})
		}
		if p.Lane.Open() {
			out = append(out, depWarnings(p, deps[i].Unmet)...)
		}
		if p.Lane == model.InProgress {
			out = append(out, t.claimLeaseWarnings(p, leased[p.Rel], now)...)
		}
	}
	out = append(out, sharers(snap)...)
	return append(out, duplicateSlugs(bySlug)...)
}

// claimWarnings says why no claim can take p, or why workers that make
// its branch skip it.
func claimWarnings(p *model.Plan) []model.Warning {
	if why := model.ClaimProblem(p, false); why != "" {
		return []model.Warning{{File: p.Rel, Message: "no claim can take it: " + why}}
	}
	if why := model.ClaimProblem(p, true); why != "" {
		return []model.Warning{{File: p.Rel, Message: "workers that make its branch (--ensure-worktree, --run in git) skip it: " + why}}
	}
	return nil
}

// depWarnings lists p's dependencies that can never be met: missing ones
// and cycles.
func depWarnings(p *model.Plan, unmet []model.Unmet) []model.Warning {
	var out []model.Warning
	for _, u := range unmet {
		switch {
		case u.Reason == "missing":
			out = append(out, model.Warning{File: p.Rel, Message: fmt.Sprintf("depends on %q, which is in no lane and never was in completed/", u.Slug)})
		case u.Reason == "cycle":
			out = append(out, model.Warning{File: p.Rel, Message: fmt.Sprintf("dependency cycle through %q: neither can ever start", u.Slug)})
		}
	}
	return out
}

// claimLeaseWarnings says when claimed p has no live lease: none (l nil)
// or an expired one.
func (t *Tree) claimLeaseWarnings(p *model.Plan, l *model.Lease, now float64) []model.Warning {
	switch {
	case l == nil:
		// Workers keep moving while we look: ask the tree again.
		if t.exists(p.Rel) && t.ReadLease(p.Rel) == nil && !t.claimInFlight(p.Name) {
			return []model.Warning{{File: p.Rel, Message: "in progress without a lease; `fleetwatch recover " + p.Rel + "` takes it over"}}
		}
	case l.Corrupt == "" && !l.Active(now):
		return []model.Warning{{File: p.Rel, Message: fmt.Sprintf("lease held by %s expired; `fleetwatch recover %s` takes it over", l.AgentID, p.Rel)}}
	}
	return nil
}

// duplicateSlugs lists each slug more than one open plan shares.
func duplicateSlugs(bySlug map[string][]string) []model.Warning {
	var out []model.Warning
	for slug, rels := range bySlug {
		if len(rels) > 1 {
			sort.Strings(rels)
			out = append(out, model.Warning{File: rels[0], Message: fmt.Sprintf("slug %q is also %s; only one can be claimed", slug, strings.Join(rels[1:], ", "))})
		}
	}
	return out
}

// checkLeases lints each lease file: corrupt, untrustworthy or orphaned.
func (t *Tree) checkLeases(snap *model.Snapshot) []model.Warning {
	var out []model.Warning
	plans := make(map[string]bool, len(snap.Plans))
	for i := range snap.Plans {
		plans[snap.Plans[i].Rel] = true
	}
	// Verbs move a plan and drop its lease under the lease lock; look at
	// orphans under it too, or a move half seen reads as one.
	if unlock, err := t.lockExisting(time.Second); err == nil {
		defer unlock()
	}
	now := t.now()
	for i := range snap.Leases {
		out = append(out, t.leaseFileWarnings(&snap.Leases[i], plans, now)...)
	}
	return out
}

// leaseFileWarnings says what is wrong with lease file l: corrupt for
// longer than a write takes, not trusted to expire, or orphaned (no plan
// of plans at its path).
func (t *Tree) leaseFileWarnings(l *model.Lease, plans map[string]bool, now float64) []model.Warning {
	file := ".leases/" + l.File
	lane := model.Rel(l.Rel).Lane()
	switch {
	case l.Corrupt != "":
		if cur := t.ReadLease(l.Rel); cur != nil && cur.Corrupt != "" && now-cur.ModTime >= unreadableGrace(cur) {
			return []model.Warning{{File: file, Message: "corrupt lease (" + l.Corrupt + "); `fleetwatch recover " + l.Rel + "` clears it"}}
		}
	case l.Implausible(now) != "":
		return []model.Warning{{File: file, Message: fmt.Sprintf("lease held by %s cannot be trusted to expire: %s; `fleetwatch recover %s` takes it over", l.AgentID, l.Implausible(now), l.Rel)}}
	case !plans[l.Rel]:
		// A live claimer's ready-path lease outlives its plan's move by a
		// moment, and a finished claim's may linger (same token as its
		// in-progress lease): neither is an orphan.
		if !t.exists(l.Rel) && t.ReadLease(l.Rel) != nil && !(lane.Ready() && (!t.abandoned(l) || t.finishedClaim(l))) {
			return []model.Warning{{File: file, Message: "orphaned lease: no plan at " + l.Rel}}
		}
	}
	return nil
}

// uniqueWarnings drops repeats: a snapshot from Preview already carries the
// symlink problems Check looks for itself.
func uniqueWarnings(ws []model.Warning) []model.Warning {
	seen := make(map[model.Warning]bool, len(ws))
	out := ws[:0]
	for _, w := range ws {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// sharers reports each plan whose branch another plan's slug also makes:
// no claim takes either until one is renamed (model.BranchSharers).
func sharers(snap *model.Snapshot) []model.Warning {
	sh := model.BranchSharers(snap)
	var out []model.Warning
	for i := range snap.Plans {
		if why := sh.Why(&snap.Plans[i]); why != "" {
			out = append(out, model.Warning{File: snap.Plans[i].Rel, Message: "no claim can take it: " + why})
		}
	}
	return out
}
