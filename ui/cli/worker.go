package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

const workerLong = `Acts on one running worker of this machine by its agent id: pause stops its
agent where it is (its processes stopped, its model calls held, its lease kept
alive), resume lets it go on, stop ends the run and puts its plan back (or, for
a run paused at its budget, parks it in blocked/ with what it spent). stop also
reaches a worker on another machine, through the record its driver publishes in
a git or etcd claims backend (--host names the machine).`

func workerCmd() *cobra.Command {
	cmd := group("worker", "pause, resume or stop one running worker", workerLong, true,
		workerVerbCmd("pause", "pause a worker's agent where it is; its lease is kept",
			func(st look.State) error { return proc.Pause(st, true) }, "paused"),
		workerVerbCmd("resume", "let a paused worker's agent go on",
			func(st look.State) error { return proc.Pause(st, false) }, "resumed"),
		workerStopCmd())
	cmd.Example = "  fleetwatch worker pause w-mid-1\n  fleetwatch worker resume w-mid-1"
	return cmd
}

func workerVerbCmd(verb, short string, act func(look.State) error, done string) *cobra.Command {
	cmd := leaf(verb+" AGENT", short, func(fs *pflag.FlagSet) body {
		var root string
		rootFlag(fs, &root, rootHelp)
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) != 1 {
				return fail(stderr, exitError, "worker %s: want one agent id, got %d", verb, len(pos))
			}
			st, err := workerState(findRoot(root), pos[0])
			if err == nil {
				err = act(st)
			}
			if err != nil {
				return fail(stderr, exitError, "worker %s: %v", verb, err)
			}
			fmt.Fprintf(stdout, "%s: %s\n", st.AgentID, done)
			return exitOK
		}
	})
	cmd.Long = short + ". The worker must run on this machine; its state file under\nvar/fleet/workers/ names its driver."
	cmd.Example = "  fleetwatch worker " + verb + " w-mid-1"
	return cmd
}

// workerState is agent's state file in project.
func workerState(project, agent string) (look.State, error) {
	states, _ := look.ReadStates(project)
	var names []string
	for _, st := range states {
		if st.AgentID == agent {
			return st, nil
		}
		names = append(names, st.AgentID)
	}
	if len(names) == 0 {
		return look.State{}, fmt.Errorf("no worker %q: no worker has run in %s", agent, project)
	}
	hint := ""
	if n := nearest(agent, names); n != "" {
		hint = ": did you mean " + n + "?"
	}
	return look.State{}, fmt.Errorf("no worker %q%s", agent, hint)
}
