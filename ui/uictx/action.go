package uictx

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
)

// ActionMsg is the outcome of one verb: what to tell the operator.
type ActionMsg struct {
	Done string
	Err  error
}

// Action runs one engine verb off the UI goroutine. The closure gets
// copies of everything it needs, never the model.
func Action(what string, do func() (string, error)) tea.Cmd {
	return func() tea.Msg {
		msg, err := do()
		if err != nil {
			return ActionMsg{Err: fmt.Errorf("%s: %w", what, err)}
		}
		return ActionMsg{Done: msg}
	}
}
