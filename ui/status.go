package ui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// statusFade is how long a status message stays before the key hints
// come back.
const statusFade = 5 * time.Second

// statusFadeMsg asks to clear status message seq, if it is still shown.
type statusFadeMsg struct{ seq int }

// fadeCmd times the fade of a status message set since seq was current.
func (m *Model) fadeCmd(seq int) tea.Cmd {
	if m.statusSeq == seq || m.status == "" || m.holdStatus {
		return nil
	}
	next := m.statusSeq
	return tea.Tick(statusFade, func(time.Time) tea.Msg { return statusFadeMsg{seq: next} })
}

// fadeStatus clears the status message the fade was timed for; an error
// stays while a question is open, as it would until the next key.
func (m *Model) fadeStatus(msg statusFadeMsg) {
	if msg.seq != m.statusSeq {
		return
	}
	if top := m.stack.top(); m.statusErr && top != nil && top.asks() {
		return
	}
	m.status, m.statusErr = "", false
}
