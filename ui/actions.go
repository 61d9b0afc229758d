package ui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
)

// actionMsg is the outcome of one verb: what to tell the operator.
type actionMsg struct {
	done string
	err  error
}

// actionCmd runs one engine verb off the UI goroutine. The closure gets
// copies of everything it needs, never the model.
func actionCmd(what string, do func() (string, error)) tea.Cmd {
	return func() tea.Msg {
		msg, err := do()
		if err != nil {
			return actionMsg{err: fmt.Errorf("%s: %w", what, err)}
		}
		return actionMsg{done: msg}
	}
}
