package verbs

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// PauseCmd asks st's driver to pause its run (on) or resume it.
func PauseCmd(st look.State, on bool) tea.Cmd {
	verb, done := "pause", "asked "+st.AgentID+"'s driver to pause its run where it is"
	if !on {
		verb, done = "resume", "asked "+st.AgentID+"'s driver to resume its run"
	}
	return uictx.Action(verb, func() (string, error) { return done, proc.Pause(st, on) })
}

// stopCmd stops the worker r showed, if its state file still shows the
// same process.
func StopCmd(project string, t *planfs.Tree, st look.State, child bool) tea.Cmd {
	return uictx.Action("stop", func() (string, error) {
		if !child {
			states, _ := look.ReadStates(project)
			found := false
			for _, now := range states {
				if now.AgentID == st.AgentID {
					found = now.PID == st.PID && now.State == st.State
					st = now
				}
			}
			if !found {
				return "", fmt.Errorf("%s changed while you decided; nothing signalled, look again", st.AgentID)
			}
		}
		if err := proc.StopAs(t, st); err != nil {
			return "", err
		}
		return "sent SIGTERM to " + st.AgentID + " (pid " + kit.Itoa(st.PID) + "); it releases its plan and exits", nil
	})
}
