package ui

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/panes/workers"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// maxLogPanes is how many logs show side by side.
const maxLogPanes = uictx.MaxLogPanes

// logBacklog is how many earlier lines a log pane starts with; logKeep is
// how many it keeps as new ones come.
const (
	logBacklog = 500
	logKeep    = 5000
)

// logMinWidth is the narrowest a log pane gets beside another; below it
// the panes stack.
const logMinWidth = 50

// logView is the logs of up to four workers, each following its file.
type logView struct {
	gen   int // which opening the panes belong to; older messages are dropped
	panes []*logPane
	focus int
	wrap  bool // long lines wrap (w); off, they are cut at the width
	zoom  bool // the focused pane alone fills the screen (z)
}

// logPane is one worker's log as far as it has been read.
type logPane struct {
	agent string
	rel   string // the log file, relative to the project
	tail  *look.Tail
	lines []string // as the tail delivered them
	// shown is each line as drawn, rendered when it first comes on
	// screen ("" until then): a flood of lines costs what the visible
	// ones cost.
	shown []string
	off   int // lines scrolled up from the newest; 0 follows
	// sub is how many rows of the bottom line are hidden below the
	// screen, when wrapped.
	sub int
	x   int // columns scrolled to the right, when not wrapped
	// wrapped is each line wrapped to tw columns, made when first shown
	// (nil until then), as shown is.
	wrapped [][]string
	tw      int
	err     string
	open    bool // the tail started (or failed)
	ended   bool // the tail stopped delivering
}

type logOpenedMsg struct {
	gen, i int
	tail   *look.Tail
	err    error
}

type logLinesMsg struct {
	gen, i int
	lines  []string
	closed bool
}

func (v *logView) tails() []*look.Tail {
	var out []*look.Tail
	for _, p := range v.panes {
		if p.tail != nil {
			out = append(out, p.tail)
		}
	}
	return out
}

// openTailCmd starts following a log: the file is read off the UI goroutine.
func openTailCmd(path string, gen, i int) tea.Cmd {
	return func() tea.Msg {
		t, err := look.TailLog(path, logBacklog)
		return logOpenedMsg{gen: gen, i: i, tail: t, err: err}
	}
}

// waitLogCmd waits for a tail's next batch; it is issued again only when
// its own message arrives.
func waitLogCmd(t *look.Tail, gen, i int) tea.Cmd {
	return func() tea.Msg {
		lines, ok := <-t.Lines()
		return logLinesMsg{gen: gen, i: i, lines: lines, closed: !ok}
	}
}

// closeTailsCmd stops following logs that are no longer shown.
func closeTailsCmd(tails []*look.Tail) tea.Cmd {
	if len(tails) == 0 {
		return nil
	}
	return func() tea.Msg {
		for _, t := range tails {
			_ = t.Close()
		}
		return nil
	}
}

// openLogs shows the marked workers' logs, or the selected one's.
func (m *Model) openLogs() tea.Cmd {
	agents := slices.Clone(workersOf(m).Marks())
	if len(agents) == 0 {
		r := m.selectedWorker()
		if r == nil {
			return nil
		}
		agents = []string{r.St.AgentID}
	}
	m.logGen++
	v := &logView{gen: m.logGen}
	var cmds []tea.Cmd
	for i, a := range agents {
		path := look.LogPath(m.Opt.Tree.Project, a)
		rel, err := filepath.Rel(m.Opt.Tree.Project, path)
		if err != nil {
			rel = path
		}
		v.panes = append(v.panes, &logPane{agent: a, rel: rel})
		cmds = append(cmds, openTailCmd(path, v.gen, i))
	}
	m.stack.push(v)
	return tea.Batch(cmds...)
}

func (m *Model) closeLogs() tea.Cmd {
	v := m.logsShown()
	m.stack.remove(v)
	return closeTailsCmd(v.tails())
}

func (m *Model) logOpened(msg logOpenedMsg) tea.Cmd {
	v := m.logsShown()
	if v == nil || msg.gen != v.gen {
		if msg.tail != nil {
			return closeTailsCmd([]*look.Tail{msg.tail})
		}
		return nil
	}
	p := v.panes[msg.i]
	p.open = true
	if msg.err != nil {
		// The project is known: the reason needs the room.
		p.err = strings.ReplaceAll(msg.err.Error(), m.Opt.Tree.Project+string(filepath.Separator), "")
		return nil
	}
	p.tail = msg.tail
	return waitLogCmd(msg.tail, msg.gen, msg.i)
}

func (m *Model) logLines(msg logLinesMsg) tea.Cmd {
	v := m.logsShown()
	if v == nil || msg.gen != v.gen {
		return nil
	}
	p := v.panes[msg.i]
	if msg.closed {
		p.ended, p.tail = true, nil
		return nil
	}
	p.lines = append(p.lines, msg.lines...)
	p.shown = append(p.shown, make([]string, len(msg.lines))...)
	if p.wrapped != nil {
		p.wrapped = append(p.wrapped, make([][]string, len(msg.lines))...)
	}
	if p.off > 0 || p.sub > 0 {
		// Scrolled up: the lines on screen stay where they are.
		p.off += len(msg.lines)
	}
	if drop := len(p.lines) - logKeep; drop > 0 {
		p.lines = append(p.lines[:0], p.lines[drop:]...)
		p.shown = append(p.shown[:0], p.shown[drop:]...)
		if p.wrapped != nil {
			p.wrapped = append(p.wrapped[:0], p.wrapped[drop:]...)
		}
	}
	m.clampLog(msg.i)
	return waitLogCmd(p.tail, msg.gen, msg.i)
}

// logRect is where one log pane goes.
type logRect struct{ row, w, h int }

// logLayout places n panes in w×h: side by side while each gets
// logMinWidth columns, else in rows (two by two for four).
func logLayout(n, w, h int) []logRect {
	cols := n
	for cols > 1 && w/cols < logMinWidth {
		cols--
	}
	if n == 4 && cols == 3 {
		cols = 2
	}
	rows := (n + cols - 1) / cols
	out := make([]logRect, 0, n)
	for r := 0; r < rows; r++ {
		rh := h / rows
		if r < h%rows {
			rh++
		}
		k := min(cols, n-r*cols)
		for c := 0; c < k; c++ {
			cw := w / k
			if c < w%k {
				cw++
			}
			out = append(out, logRect{row: r, w: cw, h: rh})
		}
	}
	return out
}

func (m *Model) logRects() []logRect {
	v := m.logsShown()
	return v.layout(m.Cols, max(0, m.Height-2))
}

// layout places the panes in w×h; zoomed, the focused one takes it all
// and the others none.
func (v *logView) layout(w, h int) []logRect {
	if !v.zoom {
		return logLayout(len(v.panes), w, h)
	}
	rects := make([]logRect, len(v.panes))
	rects[v.focus] = logRect{w: w, h: h}
	return rects
}

// logVisible is how many lines pane i shows.
func (m *Model) logVisible(i int) int {
	rects := m.logRects()
	if i >= len(rects) {
		return 1
	}
	return max(1, rects[i].h-2)
}

func (m *Model) clampLog(i int) {
	v := m.logsShown()
	if v.zoom && i != v.focus {
		// Hidden: judged at the size it gets when shown again.
		return
	}
	p, vis := v.panes[i], m.logVisible(i)
	if v.wrap {
		m.clampWrapped(p, vis, m.logTextWidth(i))
		return
	}
	p.off = max(0, min(p.off, len(p.lines)-vis))
}

func (*logView) asks() bool   { return false }
func (*logView) typing() bool { return false }

func (v *logView) key(m *Model, msg tea.KeyMsg) tea.Cmd {
	k := &m.Keys
	switch {
	case key.Matches(msg, k.Interrupt):
		return m.quit()
	case key.Matches(msg, k.Close):
		return m.closeLogs()
	case key.Matches(msg, k.NextPane):
		v.focus = (v.focus + 1) % len(v.panes)
		m.clampLog(v.focus) // zoomed, it is now shown at another size
		return nil
	case key.Matches(msg, k.PrevPane):
		v.focus = (v.focus + len(v.panes) - 1) % len(v.panes)
		m.clampLog(v.focus)
		return nil
	case key.Matches(msg, k.Logs.Wrap):
		m.toggleWrap(v)
		return nil
	case key.Matches(msg, k.Logs.Zoom):
		m.toggleZoom(v)
		return nil
	case key.Matches(msg, k.Logs.Left):
		m.scrollSideways(v, -logStep)
		return nil
	case key.Matches(msg, k.Logs.Right):
		m.scrollSideways(v, logStep)
		return nil
	}
	p, vis := v.panes[v.focus], m.logVisible(v.focus)
	if v.wrap {
		m.wrapKey(v, msg)
		return nil
	}
	// off counts lines up from the newest.
	if d, ok := k.Step(msg, vis, len(p.lines)); ok {
		p.off -= d
	}
	m.clampLog(v.focus)
	return nil
}

func (v *logView) view(m *Model, h int) []string {
	if v.zoom {
		return m.logPaneView(v, v.focus, v.panes[v.focus], m.Cols, h)
	}
	rects := logLayout(len(v.panes), m.Cols, h)
	var out, row []string
	for i, p := range v.panes {
		block := m.logPaneView(v, i, p, rects[i].w, rects[i].h)
		if row == nil {
			row = block
		} else {
			row = kit.Beside(row, block)
		}
		if i == len(v.panes)-1 || rects[i+1].row != rects[i].row {
			out = append(out, row...)
			row = nil
		}
	}
	return out
}

func (m *Model) logPaneView(v *logView, i int, p *logPane, w, h int) []string {
	if w < 4 || h < 2 {
		blank := make([]string, max(0, h))
		for j := range blank {
			blank[j] = strings.Repeat(" ", max(0, w))
		}
		return blank
	}
	focus := i == v.focus
	title := termtext.Line(p.agent)
	if r := m.wrk.byAgent(p.agent); r != nil {
		state, _ := workers.HealthCell(r)
		title += " · " + state
		if r.St.Plan != "" {
			title += " · " + termtext.Line(kit.PlanSlug(r.St.Plan))
		}
	}
	if focus && len(v.panes) > 1 && !v.zoom {
		title = "▸ " + title
	}
	if p.x > 0 && !v.wrap {
		title += " · →" + kit.Itoa(p.x)
	}
	vis := h - 2
	hint := ""
	switch {
	case p.off > 0 || p.sub > 0:
		// A bottom line cut by wrapping counts as a line below.
		hint = "↑" + kit.Itoa(p.off+min(p.sub, 1)) + " · G follows"
	case p.ended:
		hint = "stopped following"
	case len(p.lines) > 0:
		hint = "following"
	}
	if v.wrap {
		hint = "wrap · " + hint
	}
	var body []string
	switch {
	case p.err != "":
		body = []string{" ✗ " + termtext.Line(p.err)}
	case !p.open:
		body = []string{" " + m.St.Dim.Render("opening "+termtext.Line(p.rel)+"…")}
	case len(p.lines) == 0:
		body = []string{" " + m.St.Dim.Render("no lines yet in "+termtext.Line(p.rel)), " " + m.St.Dim.Render("new ones show here as they come")}
	default:
		body = m.logBody(v, p, vis, w-3)
	}
	return m.Box(title, hint, body, w, h, focus)
}

// logsHelp is the footer's reminder in the logs view; narrow, the short
// words.
func (m *Model) logsHelp(v *logView) string {
	s := "↑/↓ pgup/pgdn scroll · g top · G follow · w wrap · z zoom · esc close"
	side, next := "←/→ sideways · ", "tab next log · "
	if !m.Wide {
		s, side, next = "↑/↓ scroll · G follow · w wrap · z zoom · esc close", "←/→ side · ", "tab next · "
	}
	if !v.wrap {
		s = side + s
	}
	if len(v.panes) > 1 {
		s = next + s
	}
	return m.St.Help.Render(s)
}
