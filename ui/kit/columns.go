package kit

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

// CellWidth is how many cells s takes once termtext has made it safe to
// show; printable ASCII, which almost every cell is, is counted without
// decoding.
func CellWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x7f || s[i] < 0x20 {
			return ansi.StringWidth(termtext.Line(s))
		}
	}
	return len(s)
}

// ColWant is one column asking for room: its widest cell (header included),
// the least it is shown with, and the most it takes.
type ColWant struct {
	W                *int
	Want, Floor, Top int
}

// Allot serves the columns in order out of room, each with its separator:
// what its widest cell wants, capped; a column whose floor does not fit
// is dropped (width 0). It returns the room left.
func Allot(room int, cols ...ColWant) int {
	for _, c := range cols {
		n := min(c.Want, c.Top, room-1)
		if n < c.Floor {
			n = 0
			if c.Want > 0 && room-1 >= c.Floor {
				n = c.Floor
			}
		}
		*c.W = n
		if n > 0 {
			room -= n + 1
		}
	}
	return room
}

// Cell is s fitted to w and a space, or nothing for a hidden column (w 0).
func Cell(s string, w int) string {
	if w == 0 {
		return ""
	}
	return Fit(s, w) + " "
}

// Col is a column asking for room: its width w is set by Allot.
func Col(w *int, want, floor, top int) ColWant { return ColWant{w, want, floor, top} }

// Lead is a row's cursor gutter plus the pickable mark.
const Lead = 4
