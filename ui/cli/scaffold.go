package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/refname"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/registry"
	"github.com/fleetwatch/fleetwatch/workers/landing"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

const scaffoldLong = `Creates what a project needs, keeping every file that already exists:
.plans/ with every lane, its README and .gitignore; ANCHOR-CONVENTIONS.md when the
project has no conventions file; fleetwatch.yaml (the settings: integration branch,
checks, queue, worktrees, sandbox, claims) and endpoints.yaml (one endpoint per
agent preset), with every line but the integration branch commented out, so the
defaults hold until you turn a setting on. Then it prints the next three commands.

The integration branch is where approved work lands. On a terminal scaffold asks
for it, offering the repository's default branch (origin's HEAD, else the branch
checked out); without one it takes that branch. A fleetwatch.yaml that exists is
kept, and names its own (or none: then dev, else develop).

.plans/ is meant to be committed: fleetwatch moves plan files but never commits
them, so a person commits plan moves (leases, logs and var/ ignore themselves).`

const scaffoldExample = `  fleetwatch scaffold              # the current folder
  fleetwatch scaffold ~/src/shop    # another one
  fleetwatch scaffold < /dev/null   # no question: the default branch is the integration branch`

// scaffold makes dir a project and says what to run next; named is
// whether the folder was given (then the next commands name it too).
func scaffold(dir string, named bool, stdout, stderr io.Writer) int {
	branch, err := integrationFor(dir, stdout)
	if err != nil {
		return fail(stderr, exitError, "scaffold: %v", err)
	}
	made, err := planfs.Scaffold(dir)
	for _, m := range made {
		fmt.Fprintln(stdout, "created "+m)
	}
	if err != nil {
		return fail(stderr, exitError, "scaffold: %v", err)
	}
	settings := "every setting commented out"
	if branch != "" {
		settings = "integration: " + branch + "; every other setting commented out"
	}
	for _, f := range []struct{ name, text, note string }{
		{config.File, config.TemplateFor(branch), settings},
		{registry.DefaultFile, registry.Template(), "every setting commented out"},
	} {
		wrote, err := safepath.WriteNew(dir, f.name, []byte(f.text), 0o644)
		if err != nil {
			return fail(stderr, exitError, "scaffold: cannot write %v", err)
		}
		if wrote {
			made = append(made, filepath.Join(dir, f.name))
			fmt.Fprintf(stdout, "created %s (%s)\n", filepath.Join(dir, f.name), f.note)
		} else {
			fmt.Fprintf(stdout, "kept %s: it exists\n", filepath.Join(dir, f.name))
		}
	}
	if len(made) == 0 {
		fmt.Fprintln(stdout, "nothing to do: the tree is complete")
	}
	sayIntegration(stdout, dir, branch)
	if _, err := tree.Project(dir); err != nil {
		fmt.Fprintln(stdout, "This folder is not in a git repository: run git init first; worktrees, review and landing need one.")
	}
	nextCommands(stdout, dir, named)
	return exitOK
}

// integrationFor is the branch the fleetwatch.yaml scaffold writes names:
// asked for on a terminal, else the repository's default branch; "" when
// fleetwatch.yaml exists (it is kept) or dir is in no repository.
func integrationFor(dir string, stdout io.Writer) (string, error) {
	if _, err := os.Lstat(filepath.Join(dir, config.File)); !errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if _, err := tree.Project(dir); err != nil {
		return "", nil
	}
	def := landing.DefaultBranch(dir)
	if def == "" || !isTerminal(os.Stdin) {
		return def, nil
	}
	in := bufio.NewReader(os.Stdin)
	for range 3 {
		fmt.Fprintf(stdout, "Integration branch, where approved work lands [%s]: ", def)
		line, err := in.ReadString('\n')
		answer := strings.TrimSpace(line)
		if answer == "" {
			if err != nil {
				fmt.Fprintln(stdout)
			}
			return def, nil
		}
		if why := refname.Problem(answer); why != "" {
			fmt.Fprintf(stdout, "git refuses branch name %q (%s)\n", answer, why)
			continue
		}
		return answer, nil
	}
	return "", errors.New("no integration branch git accepts after three tries; run scaffold again")
}

// sayIntegration says where approved work lands and how it reaches the
// repository's main line, when scaffold chose the branch.
func sayIntegration(w io.Writer, dir, branch string) {
	if branch == "" {
		fmt.Fprintln(w, "\n.plans/ is meant to be committed: fleetwatch moves plan files but never commits them, so commit plan moves yourself.")
		return
	}
	trunk := landing.DefaultBranch(dir)
	if branch == trunk {
		fmt.Fprintf(w, "\nIntegration branch: %s. fleetwatch queue land puts approved work straight on %s.\n", branch, branch)
	} else {
		fmt.Fprintf(w, "\nIntegration branch: %s. fleetwatch queue land lands approved work on %s; it reaches %s when you merge %s into %s (a pull request, or git merge).\n",
			branch, branch, trunk, branch, trunk)
	}
	fmt.Fprintf(w, ".plans/ is meant to be committed: fleetwatch moves plan files but never commits them. Commit plan moves and settings on %s yourself; once the queue has landed there, fleetwatch queue accept takes such a commit as yours.\n", branch)
}

// nextCommands prints the next three commands, naming the folder when it
// was given.
func nextCommands(w io.Writer, dir string, named bool) {
	where := ""
	if named {
		where = " --root " + shellWords([]string{dir})
	}
	fmt.Fprintf(w, "\nNext:\n")
	fmt.Fprintf(w, "  fleetwatch agents%s        # pick an agent you have, then uncomment its endpoint in endpoints.yaml\n", where)
	fmt.Fprintf(w, "  fleetwatch new first-plan --lane features --models mid%s   # write a plan\n", where)
	fmt.Fprintf(w, "  fleetwatch work-once --run --ensure-worktree --endpoint claude --agent-id mid-1%s   # a worker runs it\n", where)
}
