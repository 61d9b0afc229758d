package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// key routes a key press. The order lives here alone: a question (a
// dialog, the spawn form) on top, then the filter being typed, then the
// top overlay (help, the logs, the reader), then the shown pane and the
// keys that work everywhere.
func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste && !m.typing() {
		// Keys that came in one read (over SSH, or a key held down) are
		// one message: each is a key of its own.
		var cmds []tea.Cmd
		for _, r := range msg.Runes {
			cmds = append(cmds, m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}))
		}
		return tea.Batch(cmds...)
	}
	if len(m.settle.held) > 0 {
		// A key is waiting for the screen: this one goes after it.
		if cmd, ok := m.holdKey(msg); ok {
			return cmd
		}
	}
	top := m.stack.top()
	switch {
	case top != nil && top.asks():
		return top.key(m, msg)
	case m.typingFilter() != nil:
		return m.filterKey(msg)
	}
	if m.statusErr {
		m.setStatus("", false)
	}
	if top != nil {
		return top.key(m, msg)
	}
	if cmd, ok := m.globalKey(msg); ok {
		return cmd
	}
	if req, ok := m.paneOf(m.pane).Update(m.ctx(), msg); ok {
		return m.route(req)
	}
	if cmd, ok := m.moveKey(msg); ok {
		return cmd
	}
	k := &m.Keys
	switch {
	case key.Matches(msg, k.Spawn):
		return m.askSpawn()
	case key.Matches(msg, k.Escape):
		return m.escape()
	default:
		if why, ok := m.Why[msg.String()]; ok {
			if cmd, held := m.holdKey(msg); held {
				return cmd
			}
			m.setStatus("✗ "+why, true)
		}
	}
	return nil
}

// globalKey answers the keys that mean the same in every pane: quit,
// help, and moving between panes.
func (m *Model) globalKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	k := &m.Keys
	switch {
	case key.Matches(msg, k.Quit):
		return m.quit(), true
	case key.Matches(msg, k.Help):
		m.stack.push(&helpScreen{})
		return nil, true
	case key.Matches(msg, k.Notices):
		return m.openNotices(), true
	case key.Matches(msg, k.Filter):
		return m.startFilter(), true
	case key.Matches(msg, k.NextPane):
		return m.setPane((m.pane + 1) % paneCount()), true
	case key.Matches(msg, k.PrevPane):
		return m.setPane((m.pane + paneCount() - 1) % paneCount()), true
	}
	for i, b := range k.Panes {
		if key.Matches(msg, b) {
			return m.setPane(uictx.PaneID(i)), true
		}
	}
	return nil, false
}

// moveKey moves the shown pane's cursor.
func (m *Model) moveKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	t := m.current()
	d, ok := m.Keys.Step(msg, t.Height, t.Len())
	if !ok {
		return nil, false
	}
	return m.moveCursor(d), true
}

// escape clears the marks in the workers pane, else the pane's filter.
func (m *Model) escape() tea.Cmd {
	if m.pane == workersPane && workersOf(m).ClearMarks() {
		return nil
	}
	if m.clearFilter() {
		return m.schedulePreview()
	}
	return nil
}

// typing reports whether a text field takes the keys now.
func (m *Model) typing() bool {
	if top := m.stack.top(); top != nil && top.typing() {
		return true
	}
	return m.typingFilter() != nil
}

func (m *Model) quit() tea.Cmd {
	m.Close()
	return tea.Quit
}

func (m *Model) moveCursor(d int) tea.Cmd {
	m.current().Move(d)
	m.syncKeys()
	return m.schedulePreview()
}

func (m *Model) setPane(p uictx.PaneID) tea.Cmd {
	m.pane = p
	m.syncKeys()
	switch p {
	case worktreesPane:
		return m.requestTrees()
	case workersPane:
		return m.requestWorkers()
	}
	return m.schedulePreview()
}

// initFilters gives every pane its text field, made by the session's renderer.
func (m *Model) initFilters() {
	for p := range paneCount() {
		f := m.paneOf(p).FilterOf()
		f.Input = m.TextField()
		f.Input.Prompt = "/ "
		f.Input.Placeholder = paneSpecs[p].hint
	}
}

// typingFilter is the filter being typed in, or nil.
func (m *Model) typingFilter() *kit.Filter {
	if f := m.paneOf(m.pane).FilterOf(); f.Typing {
		return f
	}
	return nil
}

// startFilter opens the shown pane's filter for typing.
func (m *Model) startFilter() tea.Cmd {
	f := m.paneOf(m.pane).FilterOf()
	f.Typing = true
	return f.Input.Focus()
}

// filterKey types into the shown pane's filter; the rows narrow with each
// key. enter keeps the text (it stays shown while it applies), esc drops it.
func (m *Model) filterKey(msg tea.KeyMsg) tea.Cmd {
	f := m.paneOf(m.pane).FilterOf()
	var cmd tea.Cmd
	switch {
	case key.Matches(msg, m.Keys.Ask.Cancel):
		f.Typing = false
		f.Input.Blur()
		f.Input.SetValue("")
	case key.Matches(msg, m.Keys.Ask.Confirm):
		f.Typing = false
		f.Input.Blur()
		if m.pane == plansPane {
			plansOf(m).LaneWithMatches()
		}
	default:
		f.Input, cmd = f.Input.Update(msg)
	}
	m.paneOf(m.pane).Rebuild(m.ctx())
	m.syncKeys()
	return tea.Batch(cmd, m.schedulePreview())
}

// clearFilter drops the shown pane's filter; false when it had none.
func (m *Model) clearFilter() bool {
	f := m.paneOf(m.pane).FilterOf()
	if f.Input.Value() == "" {
		return false
	}
	f.Input.SetValue("")
	m.paneOf(m.pane).Rebuild(m.ctx())
	m.syncKeys()
	return true
}

// filterNote is the footer's reminder of the shown pane's filter while it
// applies.
func (m *Model) filterNote() string {
	f := m.paneOf(m.pane).FilterOf()
	if !f.Active() {
		return ""
	}
	return "filter: " + f.Input.Value() + " (esc clears)"
}
