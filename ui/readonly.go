package ui

// A viewer's session (Options.ReadOnly) and one without an editor
// (Options.NoEditor): the keys that act are off, so the footer names none
// and `?` greys them with the reason,
// and a key pressed says why in the status line. The engine refuses a
// viewer too (a read-only tree): this is the screen's half.

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// action is a key that changes something, and the verb a refusal names.
type action struct {
	b    *key.Binding
	verb string
}

// actions are every key that changes something, each pane's together
// (indexed by pane), the keys of every pane last.
func keyActions(k *uictx.KeyMap) [][]action {
	a := make([][]action, paneCount()+1)
	for p := range paneCount() {
		for _, x := range paneHelp(k, p).Acts {
			a[p] = append(a[p], action{x.Key, x.Verb})
		}
	}
	a[paneCount()] = []action{{&k.Spawn, "spawn workers"}}
	return a
}

// refuseKeys turns off what this session may not do, after every pane set
// its keys: a viewer's actions, and n and e without an editor. Where panes
// share a key, the shown pane's verb is the one a refusal names.
func (m *Model) refuseKeys(set uictx.SetKey) {
	if m.Opt.NoEditor {
		set(&m.Keys.Plans.New, false, "new plan: there is no editor in this session (over ssh); write it on the host")
		set(&m.Keys.Plans.Edit, false, "edit: there is no editor in this session (over ssh); edit it on the host")
	}
	m.feed.claims().refuseKeys(&m.Keys, set)
	if !m.Opt.ReadOnly {
		return
	}
	all := keyActions(&m.Keys)
	order := make([]int, 0, len(all))
	for p := range all {
		if p != int(m.pane) {
			order = append(order, p)
		}
	}
	for _, p := range append(order, int(m.pane)) {
		for _, a := range all[p] {
			set(a.b, false, "read-only: viewers can't "+a.verb)
		}
	}
}

// readOnlyMark is the header's word for a viewer's session.
func (m *Model) readOnlyMark() string {
	mark := ""
	if m.Opt.ReadOnly {
		mark = " · read-only"
	}
	// Beside it, as lasting: agents that run as the operator.
	if m.Opt.Uncontained != "" {
		mark += " · ⚠ " + termtext.Line(m.Opt.Uncontained)
	}
	return mark
}

// stop is StopMsg: the reason on the status line, what this session
// follows closed, and the program quits at once.
func (m *Model) stop(msg StopMsg) tea.Cmd {
	m.setStatus(msg.Reason, false)
	m.Close()
	return tea.Quit
}
