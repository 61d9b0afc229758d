package ui

import (
	"github.com/charmbracelet/x/ansi"

	"fleetwatch/internal/termtext"
	"fleetwatch/model"
)

// Column widths come from the rows' content, measured once per rebuild
// (never per frame): each column that would be cut (who holds a plan, why
// it waits, a worker's tier and model, a lease's owner, an event's reason)
// gets what its widest cell needs, up to a cap; what is left goes to the
// title-like column (a plan's title, a lease's plan, a worktree's path, a
// worker's note).

// cellWidth is how many cells s takes once termtext has made it safe to
// show; printable ASCII, which almost every cell is, is counted without
// decoding.
func cellWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x7f || s[i] < 0x20 {
			return ansi.StringWidth(termtext.Line(s))
		}
	}
	return len(s)
}

// colWant is one column asking for room: its widest cell (header included),
// the least it is shown with, and the most it takes.
type colWant struct {
	w                *int
	want, floor, top int
}

// allot serves the columns in order out of room, each with its separator:
// what its widest cell wants, capped; a column whose floor does not fit
// is dropped (width 0). It returns the room left.
func allot(room int, cols ...colWant) int {
	for _, c := range cols {
		n := min(c.want, c.top, room-1)
		if n < c.floor {
			n = 0
			if c.want > 0 && room-1 >= c.floor {
				n = c.floor
			}
		}
		*c.w = n
		if n > 0 {
			room -= n + 1
		}
	}
	return room
}

// planWant is what the plans shown need, column by column; tier is the
// widest rank cell ("12?").
type planWant struct{ slug, title, deps, who, tier int }

// countdownWidth is the widest countdown span prints below a day: 59m59s.
const countdownWidth = 6

// measurePlans is the widest slug, title, reason, holder and rank among
// rows. Ten thousand rows are measured on every refresh, so it allocates
// nothing per row: a string no longer in bytes than the widest so far
// cannot be wider.
func (p *planList) measurePlans(m *Model, rows []*model.BoardRow) planWant {
	w := planWant{slug: 4, title: 5, deps: 4, tier: 1}
	if p.skipW == nil || m.d == nil || len(p.skipW) > 2*len(m.d.board.Rows)+64 {
		p.skipW = map[string]int{} // plans gone since are dropped
	}
	for _, r := range rows {
		if len(r.Plan.Slug) > w.slug {
			w.slug = max(w.slug, cellWidth(r.Plan.Slug))
		}
		if t := r.Plan.Header.Title; len(t) > w.title {
			w.title = max(w.title, cellWidth(t))
		}
		for _, c := range r.Tiers {
			if c.Rank > 0 {
				w.tier = max(w.tier, digits(c.Rank)+len(unknownMark(c)))
			}
		}
		w.deps = max(w.deps, m.whyWidth(r, p.skipW, w.deps))
		who := 0
		switch l := r.Lease; {
		case l != nil && l.Corrupt != "":
			who = len("lease unreadable")
		case l != nil && l.Awaiting != "":
			who = cellWidth(l.AgentID) + 1 + cellWidth(l.AwaitingText())
		case l != nil:
			// Live or expired: the wider of the two, so a lease running
			// out does not move the columns.
			who = max(cellWidth(l.AgentID)+1+countdownWidth, len("EXPIRED ")+cellWidth(l.AgentID))
			if remoteLease(l) {
				who += cellWidth(heldOn(l)) // the host it is held on
			}
		case r.Person() != "":
			who = 1 + cellWidth(r.Person())
		}
		if who > 0 {
			w.who = max(w.who, who, len("held by"))
		}
	}
	return w
}

// measuredPlans is a measurement and what it was made of: the same data,
// lane and filter give the same rows, so a rebuild for another reason (a
// resize, the workers' state, a pane's keys) measures nothing again.
type measuredPlans struct {
	d      *data
	lane   model.Lane
	needle string
	want   planWant
}

// wantFor is measurePlans of the rows just selected, remembered.
func (p *planList) wantFor(m *Model) planWant {
	key := measuredPlans{d: m.d, lane: p.lane, needle: p.needle()}
	if m.d == nil || p.measured.d != key.d || p.measured.lane != key.lane || p.measured.needle != key.needle {
		key.want = p.measurePlans(m, p.rows)
		p.measured = key
	}
	return p.measured.want
}

// titleKeep is how many cells of title a wide plans table keeps however
// long the reasons are; below it, the reason is cut.
const titleKeep = 12

// whyWidth is cellWidth(whyText(r)) without building the text, or any
// width up to atMost when the text is no wider (all the caller needs).
// Why a ready plan is skipped is the board's Problem, measured once per
// plan (skips).
func (m *Model) whyWidth(r *model.BoardRow, skips map[string]int, atMost int) int {
	if r.Plan.Lane.Parked() {
		s, _ := m.whyText(r)
		return cellWidth(s)
	}
	if r.Plan.Lane.Ready() && r.Problem != "" {
		n, ok := skips[r.Plan.Rel]
		if !ok {
			n = cellWidth(r.Problem)
			skips[r.Plan.Rel] = n
		}
		return len("SKIPPED ") + n
	}
	switch {
	case len(r.Plan.Header.DependsOn) == 0:
		return len("none")
	case r.Deps.Met:
		return len("met")
	}
	unmet := r.Deps.Unmet
	// Bytes bound cells from above: only a list longer in bytes than
	// atMost is measured cell by cell.
	n := len("UNMET ") + 2*max(0, len(unmet)-1)
	for i := range unmet {
		n += len(unmet[i].Slug) + len(" ()") + len(unmet[i].Reason)
	}
	if n <= atMost {
		return n
	}
	n = len("UNMET ") + 2*max(0, len(unmet)-1)
	for i := range unmet {
		n += cellWidth(unmet[i].Slug) + len(" ()") + cellWidth(unmet[i].Reason)
	}
	return n
}

// digits is how many digits n > 0 has, counted without formatting it.
func digits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}
