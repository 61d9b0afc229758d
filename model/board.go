package model

// Board is the whole tree judged for every tier at once: each plan with the
// rank each tier's bare pick would give it. The UI and `fleetwatch board`
// show it; it is computed in one pass, so the dependency index and the sort
// are shared by the four tiers.
type Board struct {
	Rows   []BoardRow // lane order, anchor's sort order within a lane
	Counts map[Lane]int
	Leases []Lease
	// Warnings are what the scan could not read or parse.
	Warnings []Warning
}

// BoardRow is one plan on the board.
type BoardRow struct {
	Plan  *Plan
	Deps  DepStatus
	Lease *Lease
	// Tiers holds one cell per fit tier, in Tiers order.
	Tiers [4]TierCell
	// Problem says why no worker that makes branches ever claims the plan
	// (see Row.Problem), "" when nothing does.
	Problem string
}

// TierCell is how one tier's bare pick sees a plan.
type TierCell struct {
	Fit Fit
	// Rank is the plan's 1-based place in the tier's pick order, 0 when the
	// tier would skip it for Reason.
	Rank   int
	Reason string
}

// Person returns the plan's assignee when it is a person's, else "".
func (r *BoardRow) Person() string {
	h := &r.Plan.Header
	if h.AgentAssignable {
		return ""
	}
	if h.Assignee != "" {
		return h.Assignee
	}
	return h.AssigneeRaw
}

// NewBoard judges every plan in s for a bare worker of each tier (no model
// name), with opt's overrides and clock.
func NewBoard(s *Snapshot, opt Options) *Board {
	leases := leaseIndex(s)
	deps := NewDepIndex(s).Evaluate(opt.History)
	b := &Board{
		Rows:     make([]BoardRow, 0, len(s.Plans)),
		Counts:   make(map[Lane]int, len(Lanes)),
		Leases:   s.Leases,
		Warnings: s.Warnings,
	}
	sharers := BranchSharers(s)
	var rank [4]int
	noFit := opt
	noFit.NoFitCheck = true
	for _, i := range pickOrder(s) {
		p := &s.Plans[i]
		row := BoardRow{Plan: p, Deps: deps[i], Lease: leases[p.Rel]}
		// Every reason but the fit is the same for the four tiers: judged
		// once, it costs a quarter of the strings.
		r := Row{Plan: p, Deps: row.Deps, Lease: row.Lease, Problem: sharers.problem(s, p, opt.NeedBranch, opt.Refuse)}
		row.Problem = r.Problem
		if !opt.NeedBranch {
			row.Problem = sharers.problem(s, p, true, opt.Refuse)
		}
		shared := skipReason(&r, noFit)
		for k, tier := range Tiers {
			cell := TierCell{Fit: ClassifyFit(p.Header.Preferred, Worker{Tier: tier}), Reason: shared}
			if cell.Reason == "" && !opt.NoFitCheck && !cell.Fit.Eligible() {
				cell.Reason = string(cell.Fit)
			}
			if cell.Reason == "" {
				rank[k]++
				cell.Rank = rank[k]
			}
			row.Tiers[k] = cell
		}
		b.Counts[p.Lane]++
		b.Rows = append(b.Rows, row)
	}
	return b
}

// Lane returns the rows of one lane, in pick order.
func (b *Board) Lane(l Lane) []BoardRow {
	lo := -1
	for i := range b.Rows {
		if b.Rows[i].Plan.Lane == l {
			if lo < 0 {
				lo = i
			}
		} else if lo >= 0 {
			return b.Rows[lo:i]
		}
	}
	if lo < 0 {
		return nil
	}
	return b.Rows[lo:]
}
