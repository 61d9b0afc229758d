package ui

import (
	"github.com/charmbracelet/x/ansi"
)

// Wrapping, zoom and sideways scrolling of the log panes. With wrapping on,
// a pane's off counts rows (wrapped pieces of lines) up from the newest
// instead of lines; each line is wrapped when it first comes on screen and
// kept until the pane's width changes, so a flood still costs only what is
// visible.

// logStep is how many columns ←/→ move a log pane sideways.
const logStep = 10

// render is line j as drawn, rendered on first sight.
func (m *Model) logRendered(p *logPane, j int) string {
	if p.shown[j] == "" {
		p.shown[j] = m.logLine(p.lines[j])
	}
	return p.shown[j]
}

// logRows is line j wrapped to tw cells.
func (m *Model) logRows(p *logPane, j, tw int) []string {
	if p.tw != tw {
		p.tw, p.wrapped = tw, make([][]string, len(p.lines))
	}
	if p.wrapped[j] == nil {
		p.wrapped[j] = wrapLine(m.logRendered(p, j), tw)
	}
	return p.wrapped[j]
}

// logTextWidth is the width pane i's text gets: its box less the borders
// and the margin.
func (m *Model) logTextWidth(i int) int {
	rects := m.logRects()
	if i >= len(rects) {
		return 1
	}
	return max(1, rects[i].w-3)
}

// wrappedTail is the rows of p ending off rows above the newest, at most
// vis of them, oldest first; total is how many rows were counted, which is
// all of them when it is less than off+vis.
func (m *Model) wrappedTail(p *logPane, off, vis, tw int) (rows []string, total int) {
	var rev []string
	for j := len(p.lines) - 1; j >= 0 && total < off+vis; j-- {
		rs := m.logRows(p, j, tw)
		for k := len(rs) - 1; k >= 0; k-- {
			if total >= off && total < off+vis {
				rev = append(rev, rs[k])
			}
			total++
		}
	}
	for a, b := 0, len(rev)-1; a < b; a, b = a+1, b-1 {
		rev[a], rev[b] = rev[b], rev[a]
	}
	return rev, total
}

// rowsIn counts the rows of lines [from, to) of p.
func (m *Model) rowsIn(p *logPane, from, to, tw int) int {
	n := 0
	for j := max(0, from); j < to; j++ {
		n += len(m.logRows(p, j, tw))
	}
	return n
}

// linesFor is how many of the newest lines of p hold its newest rows rows.
func (m *Model) linesFor(p *logPane, rows, tw int) int {
	n, seen := 0, 0
	for j := len(p.lines) - 1; j >= 0 && seen < rows; j-- {
		seen += len(m.logRows(p, j, tw))
		n++
	}
	return n
}

// toggleWrap turns wrapping on or off for every pane, keeping each on the
// line it shows at the bottom.
func (m *Model) toggleWrap(v *logView) {
	v.wrap = !v.wrap
	for i, p := range v.panes {
		tw := m.logTextWidth(i)
		if v.wrap {
			p.off = m.rowsIn(p, len(p.lines)-p.off, len(p.lines), tw)
		} else {
			p.off = m.linesFor(p, p.off, tw)
		}
		p.x = 0
		m.clampLog(i)
	}
}

// toggleZoom shows the focused pane alone, or all of them again.
func (m *Model) toggleZoom(v *logView) {
	v.zoom = !v.zoom
	for i := range v.panes {
		m.clampLog(i)
	}
}

// scrollSideways moves the focused pane d columns, no further than its
// widest visible line needs; wrapped lines have nothing to the side.
func (m *Model) scrollSideways(v *logView, d int) {
	p := v.panes[v.focus]
	if v.wrap {
		p.x = 0
		return
	}
	widest := 0
	end := len(p.lines) - p.off
	for j := max(0, end-m.logVisible(v.focus)); j < end; j++ {
		widest = max(widest, ansi.StringWidth(m.logRendered(p, j)))
	}
	p.x = max(0, min(p.x+d, widest-m.logTextWidth(v.focus)))
}

// logBody is pane p's visible text, vis rows in tw columns.
func (m *Model) logBody(v *logView, p *logPane, vis, tw int) []string {
	var body []string
	if v.wrap {
		rows, _ := m.wrappedTail(p, p.off, vis, tw)
		for _, r := range rows {
			body = append(body, " "+r)
		}
		return body
	}
	end := len(p.lines) - p.off
	for j := max(0, end-vis); j < end; j++ {
		line := m.logRendered(p, j)
		if p.x > 0 {
			line = ansi.Cut(line, p.x, p.x+tw)
		}
		body = append(body, " "+line)
	}
	return body
}
