package ui

import (
	"slices"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// Wrapping, zoom and sideways scrolling of the log panes. With wrapping on,
// a pane's position is still off lines up from the newest, plus sub rows
// of that line hidden below: new lines move off alone, as unwrapped. Each
// line is wrapped when it first comes on screen and kept until the pane's
// width changes, so a flood still costs only what is visible.

// logStep is how many columns ←/→ move a log pane sideways.
const logStep = 10

// render is line j as drawn, rendered on first sight.
func (m *Model) logRendered(p *logPane, j int) string {
	if p.shown[j] == "" {
		p.shown[j] = uictx.LogLine(m.Common, p.lines[j])
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

// wrappedRows is the vis rows of p that end sub rows above the bottom of
// the line off lines up from the newest, oldest first.
func (m *Model) wrappedRows(p *logPane, vis, tw int) []string {
	var rev []string
	bottom := len(p.lines) - 1 - p.off
	for j := bottom; j >= 0 && len(rev) < vis; j-- {
		rs := m.logRows(p, j, tw)
		end := len(rs)
		if j == bottom {
			end = max(0, end-p.sub)
		}
		for k := end - 1; k >= 0 && len(rev) < vis; k-- {
			rev = append(rev, rs[k])
		}
	}
	slices.Reverse(rev)
	return rev
}

// scrollWrapped moves p n rows up (down when negative), a row at a time
// through the bottom line's rows, then clamps.
func (m *Model) scrollWrapped(p *logPane, n, vis, tw int) {
	for ; n > 0; n-- {
		b := len(p.lines) - 1 - p.off
		switch {
		case b < 0:
			n = 0
		case p.sub+1 < len(m.logRows(p, b, tw)):
			p.sub++
		case b > 0:
			p.off, p.sub = p.off+1, 0
		default:
			n = 0
		}
	}
	for ; n < 0; n++ {
		switch {
		case p.sub > 0:
			p.sub--
		case p.off > 0:
			p.off--
			p.sub = len(m.logRows(p, len(p.lines)-1-p.off, tw)) - 1
		default:
			n = 0
		}
	}
	m.clampWrapped(p, vis, tw)
}

// clampWrapped keeps a full screen of rows above the bottom: scrolled
// past the top, p shows its first vis rows. It wraps at most the lines of
// about two screens, however many lines p holds.
func (m *Model) clampWrapped(p *logPane, vis, tw int) {
	if p.off == 0 && p.sub == 0 {
		return
	}
	bottom, count := len(p.lines)-1-p.off, 0
	for j := min(bottom, len(p.lines)-1); j >= 0 && count < vis; j-- {
		count += len(m.logRows(p, j, tw))
		if j == bottom {
			count -= p.sub
		}
	}
	if count >= vis {
		return
	}
	// The top: the line where the first vis rows end.
	count = 0
	for j := range p.lines {
		r := len(m.logRows(p, j, tw))
		if count+r >= vis {
			p.off, p.sub = len(p.lines)-1-j, count+r-vis
			return
		}
		count += r
	}
	p.off, p.sub = 0, 0
}

// wrapKey scrolls the focused pane of a wrapped view by rows.
func (m *Model) wrapKey(v *logView, msg tea.KeyMsg) {
	k, p := &m.Keys, v.panes[v.focus]
	vis, tw := m.logVisible(v.focus), m.logTextWidth(v.focus)
	switch {
	case key.Matches(msg, k.Up):
		m.scrollWrapped(p, 1, vis, tw)
	case key.Matches(msg, k.Down):
		m.scrollWrapped(p, -1, vis, tw)
	case key.Matches(msg, k.PageUp):
		m.scrollWrapped(p, vis, vis, tw)
	case key.Matches(msg, k.PageDown):
		m.scrollWrapped(p, -vis, vis, tw)
	case key.Matches(msg, k.Top):
		p.off, p.sub = len(p.lines), 0
		m.clampWrapped(p, vis, tw)
	case key.Matches(msg, k.Bottom):
		p.off, p.sub = 0, 0
	}
}

// toggleWrap turns wrapping on or off for every pane; each stays on the
// line it shows at the bottom.
func (m *Model) toggleWrap(v *logView) {
	v.wrap = !v.wrap
	for i, p := range v.panes {
		p.sub, p.x = 0, 0
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
		for _, r := range m.wrappedRows(p, vis, tw) {
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
