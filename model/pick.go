package model

import (
	"slices"
	"strings"
)

// Options are the worker's overrides and the facts a decision needs from outside.
type Options struct {
	NoFitCheck bool
	NoDepCheck bool
	// NeedBranch is set for a worker that makes each plan's feature branch
	// (--ensure-worktree, --run in a git repo): it skips plans whose branch
	// name git refuses.
	NeedBranch bool
	// Refuse, when set, says why this worker's own setup refuses a plan by
	// its name (fleetwatch.yaml's `worktree: env` template), "" when it
	// takes it. The plan is then skipped like one with a ClaimProblem, so
	// one bad name never stalls the fleet. It must answer the same for the
	// same plan every time.
	Refuse  func(p *Plan) string
	Now     float64 // Unix seconds
	History History
}

// Row is one plan judged for one worker.
type Row struct {
	Plan  *Plan
	Fit   Fit
	Deps  DepStatus
	Lease *Lease // the lease file naming this plan, if any
	// Eligible is true when a bare pick by this worker could take the plan;
	// Rank is then its 1-based place in pick order, else 0.
	Eligible bool
	Rank     int
	// Reason says why an ineligible plan is skipped.
	Reason string
	// Problem says why no claim can ever take the plan, whoever asks and
	// however it is named (--slug, --path, a bare pick): ClaimProblem, or a
	// branch another plan also uses. "" when there is none.
	Problem string
}

// Decide judges every plan in s for w: plans come back in lane order, each
// lane in anchor's sort order, so ready plans are in pick order.
func Decide(s *Snapshot, w Worker, opt Options) []Row {
	leases := leaseIndex(s)
	deps := NewDepIndex(s).Evaluate(opt.History)
	shared := BranchSharers(s)
	rows := make([]Row, 0, len(s.Plans))
	rank := 0
	for _, i := range pickOrder(s) {
		p := &s.Plans[i]
		r := Row{Plan: p, Fit: ClassifyFit(p.Header.Preferred, w), Deps: deps[i], Lease: leases[p.Rel]}
		r.Problem = shared.problem(s, p, opt.NeedBranch, opt.Refuse)
		r.Reason = skipReason(&r, opt)
		if r.Eligible = r.Reason == ""; r.Eligible {
			rank++
			r.Rank = rank
		}
		rows = append(rows, r)
	}
	return rows
}

// leaseIndex maps each plan rel to the lease file naming it.
func leaseIndex(s *Snapshot) map[string]*Lease {
	leases := make(map[string]*Lease, len(s.Leases))
	for i := range s.Leases {
		leases[s.Leases[i].Rel] = &s.Leases[i]
	}
	return leases
}

// pickOrder returns the indices of s.Plans in lane order, each lane in
// anchor's sort order; keys are computed once so sorting compares integers.
func pickOrder(s *Snapshot) []int {
	keys := make([]SortKey, len(s.Plans))
	order := make([]int, len(s.Plans))
	for i := range s.Plans {
		keys[i], order[i] = KeyOf(&s.Plans[i]), i
	}
	slices.SortFunc(order, func(a, b int) int { return keys[a].Compare(keys[b]) })
	return order
}

// notReadyReasons are built once: most of a big tree is in lanes no pick
// takes from, and a board judges every plan on every refresh.
var notReadyReasons = func() map[Lane]string {
	m := make(map[Lane]string, len(Lanes))
	for _, l := range Lanes {
		m[l] = "not ready (" + string(l) + ")"
	}
	return m
}()

func notReady(l Lane) string {
	if r, ok := notReadyReasons[l]; ok {
		return r
	}
	return "not ready (" + string(l) + ")"
}

func skipReason(r *Row, opt Options) string {
	p := r.Plan
	switch {
	case !p.Lane.Ready():
		return notReady(p.Lane)
	case r.Problem != "":
		return "cannot be claimed: " + r.Problem
	case !p.Header.AgentAssignable:
		return "assigned to " + assignee(p.Header)
	}
	if why := leaseReason(r.Lease, opt.Now); why != "" {
		return why
	}
	switch {
	case !opt.NoDepCheck && !r.Deps.Met:
		return "deps UNMET: " + UnmetList(r.Deps)
	case !opt.NoFitCheck && !r.Fit.Eligible():
		return string(r.Fit)
	}
	return ""
}

// assignee is who a person's plan is assigned to, as its header says it.
func assignee(h Header) string {
	if h.Assignee == "" {
		return h.AssigneeRaw
	}
	return h.Assignee
}

// leaseReason is why a ready plan's lease l keeps it from a pick at now:
// unreadable or held; "" when there is none or it expired.
func leaseReason(l *Lease, now float64) string {
	switch {
	case l == nil:
		return ""
	case l.Corrupt != "":
		return "lease unreadable: " + l.Corrupt
	case l.Active(now):
		return "leased by " + l.AgentID
	}
	return ""
}

// UnmetList renders unmet dependencies as `a (open:bugs), b (missing)`.
func UnmetList(d DepStatus) string {
	parts := make([]string, len(d.Unmet))
	for i, u := range d.Unmet {
		parts[i] = u.Slug + " (" + u.Reason + ")"
	}
	return strings.Join(parts, ", ")
}

// Picks returns the eligible rows in pick order, skipping rels in skip.
func Picks(rows []Row, skip map[string]bool) []*Row {
	var out []*Row
	for i := range rows {
		if rows[i].Eligible && !skip[rows[i].Plan.Rel] {
			out = append(out, &rows[i])
		}
	}
	return out
}

// OwnClaims splits the in-progress rows into those agent holds with an
// active lease and everyone else's (including plans with no lease at all).
func OwnClaims(rows []Row, agent string, now float64) (own, others []Row) {
	for _, r := range rows {
		if r.Plan.Lane != InProgress {
			continue
		}
		if r.Lease != nil && r.Lease.Active(now) && r.Lease.AgentID == agent {
			own = append(own, r)
		} else {
			others = append(others, r)
		}
	}
	return own, others
}
