package ui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/model"
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

func slugOf(rel string) string {
	name := model.Rel(rel).Name()
	return model.SlugOf(name)
}

func laneOf(rel string) string {
	l := model.Rel(rel).Lane()
	return string(l)
}
