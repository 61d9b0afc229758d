package look

import (
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
)

// PausedRuns are the runs of project's workers paused where they are
// (at their budget, or by hand), for the inbox: each waits for a person.
func PausedRuns(project string) []State {
	states, _ := ReadStates(project)
	var out []State
	now := time.Now()
	for _, st := range states {
		// A driver that died paused left its plan to its lease, not to a person.
		if st.State == StateRunning && st.Paused != "" && st.Health(now) != Dead {
			out = append(out, st)
		}
	}
	return out
}

// BoardProblems are the warnings every face's board shows beside the
// tree's own: symlinks under var/ (SymlinkProblems), each daily budget
// spent today, under which claims stop, and each endpoint in trouble.
func BoardProblems(project string) []model.Warning {
	out := append(SymlinkProblems(project), ledger.SpentBudgets(project, time.Now())...)
	return append(out, endpointWarnings(project, time.Now())...)
}
