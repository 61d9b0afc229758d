package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// overlay is a screen over the panes: a dialog, the spawn form, help, the
// logs, the full-screen reader. The top one gets the keys first and draws
// the body.
type overlay interface {
	key(m *Model, msg tea.KeyMsg) tea.Cmd
	view(m *Model, h int) []string
	// asks reports a question (a dialog, the form): it takes the keys
	// before anything else, and an error in the status line stays up
	// while it is answered.
	asks() bool
	// typing reports whether a text field takes the keys now.
	typing() bool
}

// footed is an overlay that names its own keys in the footer.
type footed interface{ footer(m *Model) string }

func (v *logView) footer(m *Model) string  { return m.logsHelp(v) }
func (*reader) footer(m *Model) string     { return m.readerHelp() }
func (*detailView) footer(m *Model) string { return m.St.Help.Render(detailHelp) }
func (*noticeList) footer(m *Model) string { return m.noticesHelp() }
func (*diffView) footer(m *Model) string   { return m.diffHelp() }

// overlays is the stack, bottom first. Who opens what decides the order:
// help, the logs and the reader open from the panes, a dialog from a pane,
// the spawn form when its offer arrives; nothing opens from a question.
type overlays []overlay

func (s overlays) top() overlay {
	if len(s) == 0 {
		return nil
	}
	return s[len(s)-1]
}

func (s *overlays) push(o overlay) { *s = append(*s, o) }

// remove takes o off the stack wherever it is.
func (s *overlays) remove(o overlay) {
	for i := len(*s) - 1; i >= 0; i-- {
		if (*s)[i] == o {
			*s = append((*s)[:i], (*s)[i+1:]...)
			return
		}
	}
}

// find is the topmost overlay of type T on the stack.
func find[T overlay](s overlays) (T, bool) {
	for i := len(s) - 1; i >= 0; i-- {
		if o, ok := s[i].(T); ok {
			return o, true
		}
	}
	var zero T
	return zero, false
}

func (m *Model) dialogShown() *dialog  { d, _ := find[*dialog](m.stack); return d }
func (m *Model) formShown() *spawnForm { f, _ := find[*spawnForm](m.stack); return f }
func (m *Model) logsShown() *logView   { v, _ := find[*logView](m.stack); return v }
func (m *Model) helpShown() bool       { _, ok := find[*helpScreen](m.stack); return ok }
func (m *Model) reading() bool         { _, ok := find[*reader](m.stack); return ok }

// reader is the selected plan's preview full screen.
type reader struct{}

func (*reader) asks() bool   { return false }
func (*reader) typing() bool { return false }

func (r *reader) key(m *Model, msg tea.KeyMsg) tea.Cmd {
	k := &m.Keys
	pv := &m.pv
	switch {
	case key.Matches(msg, k.Interrupt):
		return m.quit()
	case key.Matches(msg, k.Close, k.Plans.Preview):
		m.stack.remove(r)
		m.layout()
		return m.schedulePreview()
	case key.Matches(msg, k.Top):
		pv.VP.GotoTop()
		return nil
	case key.Matches(msg, k.Bottom):
		pv.VP.GotoBottom()
		return nil
	}
	var cmd tea.Cmd
	pv.VP, cmd = pv.VP.Update(msg)
	return cmd
}

func (*reader) view(m *Model, h int) []string { return m.fullPreview(h) }
