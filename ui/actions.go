package ui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"fleetwatch/model"
	"fleetwatch/planfs"
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

func promoteCmd(t *planfs.Tree, rel string, to model.Lane, agent string, force bool) tea.Cmd {
	return actionCmd("promote", func() (string, error) {
		dst, _, err := t.Promote(rel, to, planfs.Actor{AgentID: agent, Force: force})
		return "promoted " + slugOf(rel) + " → " + laneOf(dst), err
	})
}

func parkCmd(t *planfs.Tree, rel string, to model.Lane, agent, reason string, force bool) tea.Cmd {
	return actionCmd("park", func() (string, error) {
		dst, err := t.Park(rel, to, planfs.Actor{AgentID: agent, Force: force}.Because(reason))
		return "parked " + slugOf(rel) + " in " + laneOf(dst), err
	})
}

func returnCmd(t *planfs.Tree, rel, agent string, force bool) tea.Cmd {
	return actionCmd("return", func() (string, error) {
		dst, err := t.Return(rel, "", planfs.Actor{AgentID: agent, Force: force})
		return "returned " + slugOf(rel) + " → " + laneOf(dst), err
	})
}

func completeCmd(t *planfs.Tree, rel string, to model.Lane, agent string, force bool) tea.Cmd {
	return actionCmd("complete", func() (string, error) {
		dst, err := t.Complete(rel, to, planfs.Actor{AgentID: agent, Force: force})
		return "moved " + slugOf(rel) + " → " + laneOf(dst), err
	})
}

func slugOf(rel string) string {
	name := model.Rel(rel).Name()
	return model.SlugOf(name)
}

func laneOf(rel string) string {
	l := model.Rel(rel).Lane()
	return string(l)
}
