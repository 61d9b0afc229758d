package ui

import (
	"github.com/charmbracelet/x/ansi"

	"fleetwatch/model"
)

// Column widths come from the rows' content, measured once per rebuild
// (never per frame): each column that would be cut (who holds a plan, why
// it waits, a worker's tier and model, a lease's owner, an event's reason)
// gets what its widest cell needs, up to a cap; what is left goes to the
// title-like column (a plan's title, a lease's plan, a worktree's path, a
// worker's note).

// cellWidth is how many cells s takes; ASCII, which almost every cell is,
// is counted without decoding.
func cellWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 || s[i] < 0x20 {
			return ansi.StringWidth(s)
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

// widest is the width of the widest of ss, at least floor.
func widest(floor int, ss ...string) int {
	for _, s := range ss {
		floor = max(floor, cellWidth(s))
	}
	return floor
}

// planWant is what the plans shown need, column by column.
type planWant struct{ slug, title, deps, who int }

// countdownWidth is the widest countdown span prints below a day: 59m59s.
const countdownWidth = 6

// measurePlans is the widest slug, title, reason and holder among rows.
func (m *Model) measurePlans(rows []*model.BoardRow) planWant {
	w := planWant{slug: 4, title: 5, deps: 4}
	for _, r := range rows {
		w.slug = max(w.slug, cellWidth(r.Plan.Slug))
		w.title = max(w.title, cellWidth(r.Plan.Header.Title))
		deps, _ := m.whyText(r)
		w.deps = max(w.deps, cellWidth(deps))
		who := 0
		switch l := r.Lease; {
		case l != nil && l.Corrupt != "":
			who = len("lease unreadable")
		case l != nil:
			// Live or expired: the wider of the two, so a lease running
			// out does not move the columns.
			who = max(cellWidth(l.AgentID)+1+countdownWidth, len("EXPIRED ")+cellWidth(l.AgentID))
		case r.Person() != "":
			who = 1 + cellWidth(r.Person())
		}
		if who > 0 {
			w.who = max(w.who, who, len("held by"))
		}
	}
	return w
}
