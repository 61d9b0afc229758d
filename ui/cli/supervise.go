package cli

import (
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/workers"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// superviseVerb is the hidden verb a driver starts its supervisor with.
const superviseVerb = "supervise-run"

// superviseCmd is the supervisor a `work-once --run` driver starts: it
// waits for its driver to end and stops the run a dead driver left
// (proc.Supervise). Only drivers start it.
func superviseCmd() *cobra.Command {
	cmd := leaf(superviseVerb, "stop the run of a driver that died (started by the driver)", func(fs *pflag.FlagSet) body {
		var project, agent string
		fs.StringVar(&project, "project", "", "the project's folder")
		fs.StringVar(&agent, "agent-id", "", "the driver's agent id")
		grace := fs.Duration("stop-grace", workers.DefaultGrace, "how long the run gets between SIGTERM and SIGKILL")
		return func(pos []string, stdout, stderr io.Writer) int {
			if project == "" || agent == "" || len(pos) > 0 {
				return fail(stderr, exitError, "%s: want --project and --agent-id and no argument", superviseVerb)
			}
			if err := proc.Supervise(project, agent, *grace, os.Stdin); err != nil {
				return fail(stderr, exitError, "%s: %v", superviseVerb, err)
			}
			return exitOK
		}
	})
	cmd.Hidden = true
	return cmd
}

// supervisor is the command a driver starts its supervisor with: this
// program's hidden verb; nil when this program cannot be found again.
func supervisor() []string {
	self, err := os.Executable()
	if err != nil {
		return nil
	}
	return []string{self, superviseVerb}
}
