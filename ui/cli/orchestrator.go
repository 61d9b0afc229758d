package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/planfs"
)

// orchestratorCmd reads or sets the project's preferred orchestrator, the
// `**Preferred orchestrator:**` line of its conventions file.
func orchestratorCmd() *cobra.Command {
	return leaf("orchestrator", "show or --set the project's preferred orchestrator", func(fs *pflag.FlagSet) body {
		var w watchFlags
		var set string
		w.registerProject(fs)
		fs.StringVar(&set, "set", "", "record this orchestrator, like claude:opus (creates ANCHOR-CONVENTIONS.md when missing)")
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) > 0 {
				return fail(stderr, exitError, "orchestrator: unexpected argument %q (to change it: --set %s)", pos[0], pos[0])
			}
			project, err := w.projectDir()
			if err != nil {
				return fail(stderr, exitError, "orchestrator: %v", err)
			}
			if fs.Changed("set") { // `--set ""` is an error, not a read
				if err := planfs.ValidOrchestrator(set); err != nil {
					return fail(stderr, exitError, "--set: %v", err)
				}
				file, err := planfs.SetOrchestrator(project, set)
				if err != nil {
					return fail(stderr, exitError, "orchestrator: %v", err)
				}
				fmt.Fprintf(stdout, "preferred orchestrator %s (%s)\n", strings.TrimSpace(set), file)
				return exitOK
			}
			v, _, err := planfs.Orchestrator(project)
			if err != nil {
				return fail(stderr, exitError, "orchestrator: %v", err)
			}
			if v == "" {
				names := make([]string, len(planfs.ConventionsFiles))
				for i, n := range planfs.ConventionsFiles {
					names[i] = filepath.Join(project, n)
				}
				return fail(stderr, exitNothing, "orchestrator: none set in %s (--set claude:opus sets one)", strings.Join(names, " or "))
			}
			fmt.Fprintln(stdout, v)
			return exitOK
		}
	})
}
