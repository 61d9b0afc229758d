package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// detailView is one thing read whole, full screen: a lease, a worktree, a
// worker or an event. Its lines are built when its data arrives; they are
// wrapped once per width, and the view only slices what is visible.
type detailView struct {
	id    string // what it shows; a reply for anything else is dropped
	title string
	text  []string // the lines, safe for the terminal, not yet wrapped
	rows  []string // text wrapped to width
	width int
	off   int // the first row shown
}

// detailMsg brings a detail's data, read off the UI goroutine; build turns
// it into lines on the UI goroutine, where the styles are.
type detailMsg struct {
	id    string
	build func(c *uictx.Ctx) []string
}

// openDetail shows a detail titled title and starts read, which runs off
// the UI goroutine and must copy what it needs.
func (m *Model) openDetail(id, title string, read func() func(c *uictx.Ctx) []string) tea.Cmd {
	v := &detailView{id: id, title: title, text: []string{m.St.Dim.Render("reading…")}}
	m.stack.push(v)
	return func() tea.Msg { return detailMsg{id: id, build: read()} }
}

// detailLoaded fills the shown detail the reply is for.
func (m *Model) detailLoaded(msg detailMsg) {
	v, ok := find[*detailView](m.stack)
	if !ok || v.id != msg.id {
		return
	}
	v.text, v.width = msg.build(m.ctx()), 0
	v.clamp(m.detailVisible())
}

// detailVisible is how many rows of text the detail shows: the body less
// its title line.
func (m *Model) detailVisible() int { return max(1, m.Height-3) }

// wrap rewraps the text when the width changed.
func (v *detailView) wrap(w int) {
	if w == v.width {
		return
	}
	v.width = w
	v.rows = v.rows[:0]
	for _, line := range v.text {
		v.rows = append(v.rows, wrapLine(line, w)...)
	}
}

// wrapLine breaks a line into rows of at most w cells, at spaces where it
// can, inside words where it must.
func wrapLine(line string, w int) []string {
	if ansi.StringWidth(line) <= w {
		return []string{line}
	}
	return strings.Split(ansi.Wrap(line, max(1, w), ""), "\n")
}

func (v *detailView) clamp(vis int) {
	v.off = max(0, min(v.off, len(v.rows)-vis))
}

// detailHelp is the footer's reminder while a detail is open: only the
// keys that work there.
const detailHelp = "↑/↓ pgup/pgdn scroll · g top · G end · esc/enter close"

func (*detailView) asks() bool   { return false }
func (*detailView) typing() bool { return false }

func (v *detailView) key(m *Model, msg tea.KeyMsg) tea.Cmd {
	k := &m.Keys
	vis := m.detailVisible()
	switch {
	case key.Matches(msg, k.Interrupt):
		return m.quit()
	case key.Matches(msg, k.Close), msg.Type == tea.KeyEnter:
		m.stack.remove(v)
		return nil
	}
	if d, ok := k.Step(msg, vis, len(v.rows)); ok {
		v.off += d
	}
	v.wrap(m.Cols - 2)
	v.clamp(vis)
	return nil
}

func (v *detailView) view(m *Model, h int) []string {
	v.wrap(m.Cols - 2)
	vis := max(1, h-1)
	v.clamp(vis)
	where := ""
	if len(v.rows) > vis {
		where = "  " + kit.Itoa(v.off+1) + "–" + kit.Itoa(min(len(v.rows), v.off+vis)) + " of " + kit.Itoa(len(v.rows))
	}
	head := " " + m.St.Title.Render(termtext.Line(v.title)) + m.St.Dim.Render(where)
	out := make([]string, 0, h)
	out = append(out, head)
	for _, r := range v.rows[v.off:min(len(v.rows), v.off+vis)] {
		out = append(out, " "+r)
	}
	return out
}

// readerFacts is the reader's second line: the plan's lane and who holds
// it. The header's own facts are in the rendered plan below it.
func (m *Model) readerFacts() string {
	rel := m.pv.Rel
	if rel == "" {
		return ""
	}
	s := "lane " + string(model.Rel(rel).Lane())
	if r := m.selectedPlan(); r != nil && r.Plan.Rel == rel && r.Lease != nil {
		l := r.Lease
		switch {
		case l.Corrupt != "":
			s += " · lease unreadable"
		case l.Active(m.Now):
			s += " · held by " + l.AgentID + kit.HeldOn(l) + ", " + kit.TimeLeft(l, m.Now)
		default:
			s += " · lease of " + l.AgentID + kit.HeldOn(l) + " expired " + kit.Span(m.Now-l.ExpiresAt) + " ago"
		}
	}
	return " " + m.St.Dim.Render(termtext.Line(s))
}
