package ui

import (
	"github.com/charmbracelet/x/ansi"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
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

// cell is s fitted to w and a space, or nothing for a hidden column (w 0).
func cell(s string, w int) string {
	if w == 0 {
		return ""
	}
	return Fit(s, w) + " "
}
