package cli

import (
	"fmt"
	"io"
	"path/filepath"

	"fleetwatch/internal/config"
	"fleetwatch/internal/safepath"
	"fleetwatch/planfs"
	"fleetwatch/registry"
	"fleetwatch/workers"
)

const scaffoldLong = `Creates what a project needs, keeping every file that already exists:
.plans/ with every lane, its README and .gitignore; ANCHOR-CONVENTIONS.md when the
project has no conventions file; fleetwatch.yaml (the settings: integration branch,
checks, queue, worktrees, sandbox, claims) and endpoints.yaml (one endpoint per
agent preset), both with every line commented out, so the defaults hold until
you turn a setting on. Then it prints the next three commands.

.plans/ is meant to be committed: fleetwatch moves plan files but never commits
them, so a person commits plan moves (leases, logs and var/ ignore themselves).`

const scaffoldExample = `  fleetwatch scaffold              # the current folder
  fleetwatch scaffold ~/src/shop    # another one`

// scaffold makes dir a project and says what to run next; named is
// whether the folder was given (then the next commands name it too).
func scaffold(dir string, named bool, stdout, stderr io.Writer) int {
	made, err := planfs.Scaffold(dir)
	for _, m := range made {
		fmt.Fprintln(stdout, "created "+m)
	}
	if err != nil {
		return fail(stderr, exitError, "scaffold: %v", err)
	}
	for _, f := range []struct{ name, text string }{{config.File, config.Template}, {registry.DefaultFile, registry.Template()}} {
		wrote, err := safepath.WriteNew(dir, f.name, []byte(f.text), 0o644)
		if err != nil {
			return fail(stderr, exitError, "scaffold: cannot write %v", err)
		}
		if wrote {
			made = append(made, filepath.Join(dir, f.name))
			fmt.Fprintf(stdout, "created %s (every setting commented out)\n", filepath.Join(dir, f.name))
		} else {
			fmt.Fprintf(stdout, "kept %s: it exists\n", filepath.Join(dir, f.name))
		}
	}
	if len(made) == 0 {
		fmt.Fprintln(stdout, "nothing to do: the tree is complete")
	}
	fmt.Fprintln(stdout, "\n.plans/ is meant to be committed: fleetwatch moves plan files but never commits them, so commit plan moves yourself.")
	if _, err := workers.Project(dir); err != nil {
		fmt.Fprintln(stdout, "This folder is not in a git repository: run git init first; worktrees, review and landing need one.")
	}
	where := ""
	if named {
		where = " --root " + shellWords([]string{dir})
	}
	fmt.Fprintf(stdout, "\nNext:\n")
	fmt.Fprintf(stdout, "  fleetwatch agents%s        # pick an agent you have, then uncomment its endpoint in endpoints.yaml\n", where)
	fmt.Fprintf(stdout, "  fleetwatch new first-plan --lane features --models mid%s   # write a plan\n", where)
	fmt.Fprintf(stdout, "  fleetwatch work-once --run --ensure-worktree --endpoint claude --agent-id mid-1%s   # a worker runs it\n", where)
	return exitOK
}
