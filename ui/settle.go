package ui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/ui/feed"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// settling holds keys the screen would refuse only because it has not yet
// caught up with a verb: "+" pressed right after "✓ approved" finds the
// row still unapproved until the merge queue is read again. From a
// confirmed question until the shown pane's reread after the verb's
// outcome, such a key waits, and every key after it (their order kept);
// they run when the pane has been read, or after settleWait at worst.
type settling struct {
	acting    bool // a confirmed verb has not reported yet
	rereading bool // its outcome is in; the shown pane is being read again
	held      []tea.KeyMsg
	seq       int // tells the timeout of a replay that already ran
}

const (
	settleWait = 3 * time.Second
	maxHeld    = 8
)

type settleMsg struct{ seq int }

func (s *settling) busy() bool { return s.acting || s.rereading }

// holdKey keeps msg for later when the screen is catching up, reporting
// whether it did; the first key held starts the timeout.
func (m *Model) holdKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	s := &m.settle
	if !s.busy() || len(s.held) >= maxHeld {
		return nil, false
	}
	s.held = append(s.held, msg)
	if len(s.held) > 1 {
		return nil, true
	}
	seq := s.seq
	return tea.Tick(settleWait, func(time.Time) tea.Msg { return settleMsg{seq: seq} }), true
}

// answeredMsg is the message of a confirmed question's command: it ends
// the acting, then is taken as itself.
type answeredMsg struct{ msg tea.Msg }

// confirmed notes a question answered with a command under way (a verb,
// mostly) and marks the message it brings.
func (m *Model) confirmed(cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	m.settle.acting = true
	return func() tea.Msg { return answeredMsg{cmd()} }
}

// answered takes the message a confirmed command brought. A verb that did
// something has the panes read again; until the shown one is, keys wait.
func (m *Model) answered(a answeredMsg) tea.Cmd {
	m.settle.acting = false
	switch msg := a.msg.(type) {
	case tea.BatchMsg:
		return tea.Batch(tea.Batch(msg...), m.settled(false))
	case uictx.ActionMsg:
		m.settle.rereading = msg.Err == nil
	}
	return tea.Batch(m.update(a.msg), m.settled(false))
}

// settled ends the wait once the shown pane's reading after the verb is
// in (force: the timeout ran out) and runs the keys held meanwhile.
func (m *Model) settled(force bool) tea.Cmd {
	s := &m.settle
	if !force && (s.acting || (s.rereading && m.rereadingShown())) {
		return nil
	}
	s.acting, s.rereading = false, false
	if len(s.held) == 0 {
		return nil
	}
	keys := s.held
	s.held = nil
	s.seq++
	cmds := make([]tea.Cmd, 0, len(keys))
	for _, k := range keys {
		cmds = append(cmds, m.key(k))
	}
	return tea.Batch(cmds...)
}

// rereadingShown reports whether the shown pane's data is still being
// read. A hub's session reads nothing itself: its readings arrive as
// one hubMsg, after which the feed settles (hubFeed.arrived).
func (m *Model) rereadingShown() bool {
	if m.feed.served() {
		return true
	}
	switch m.pane {
	case worktreesPane:
		return m.feed.req(feed.Trees).busy
	case workersPane:
		return m.feed.req(feed.Workers).busy
	case mergePane:
		return m.feed.req(feed.Merge).busy
	case inboxPane:
		return m.feed.req(feed.Inbox).busy
	}
	return m.feed.req(feed.Board).busy
}
