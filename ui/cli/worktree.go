package cli

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/seat"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

const worktreeUsage = `remove refuses to lose uncommitted changes or unmerged commits unless --force, and
never deletes a branch with commits not in the integration branch.
All take --root, or --project (default: the git top level of the current folder).
Exit codes: 0 ok, 1 missing, 2 error.
`

func worktreeCmd() *cobra.Command {
	return group("worktree", "an agent's git worktree and port: ensure, list, path, remove", worktreeUsage, false,
		worktreeEnsureCmd(), worktreeListCmd(), worktreePathCmd(), worktreeRemoveCmd(), worktreeIntegrationCmd())
}

// worktreeFlags are the flags the worktree subcommands share.
type worktreeFlags struct {
	name    string // "worktree ensure", for messages
	project string
	agent   string
}

func (w *worktreeFlags) flags(fs *pflag.FlagSet, sub string, withAgent bool) {
	w.name = "worktree " + sub
	projectFlags(fs, &w.project, "the git project (default: the git top level of the current folder)")
	if withAgent {
		agentFlag(fs, &w.agent, "", "the agent (required)")
	}
}

// parse settles the project and, when the subcommand takes one, the agent
// id. A negative code means go on.
func (w *worktreeFlags) parse(fs *pflag.FlagSet, pos []string, stderr io.Writer) (string, int) {
	if len(pos) > 0 {
		return "", fail(stderr, exitError, "%s: unexpected argument %q", w.name, pos[0])
	}
	if fs.Lookup("agent-id") != nil && strings.TrimSpace(w.agent) == "" {
		return "", fail(stderr, exitError, "%s: --agent-id is required", w.name)
	}
	dir := w.project
	if dir == "" {
		dir = "."
	}
	top, err := tree.Project(dir)
	if err != nil {
		if w.project == "" {
			return "", fail(stderr, exitError, "%s: the current folder is not in a git repository (--project names one)", w.name)
		}
		return "", fail(stderr, exitError, "%s: --project: %v", w.name, err)
	}
	return top, -1
}

// pushIntegration pushes the integration branch when asked; a failure is
// a warning, as anchor's: the local branch works without origin.
func pushIntegration(top, branch string, stderr io.Writer) {
	if err := tree.PushIntegration(top, branch); err != nil {
		say(stderr, "warning: --push-integration: %v", err)
	}
}

func worktreeEnsureCmd() *cobra.Command {
	return leaf("ensure", "create or reuse an agent's worktree (var/worktrees/<id>) and give it a port", func(fs *pflag.FlagSet) body {
		var w worktreeFlags
		var slug, ports string
		var push bool
		w.flags(fs, "ensure", true)
		fs.StringVar(&slug, "slug", "", "check out feature/<slug> in the worktree")
		fs.BoolVar(&push, "push-integration", false, "push the integration branch to origin when origin lacks it")
		portRangeFlag(fs, &ports, "the range LO-HI the agent's port comes from")
		return func(pos []string, stdout, stderr io.Writer) int {
			top, code := w.parse(fs, pos, stderr)
			if code >= 0 {
				return code
			}
			r, err := look.ParsePortRange(ports)
			if err != nil {
				return fail(stderr, exitError, "%s: --port-range: %v", w.name, err)
			}
			// The port first: when the range is full, nothing is created.
			if _, err := look.AssignPort(top, w.agent, r); err != nil {
				return failErr(stderr, w.name, err)
			}
			wt, err := seat.Ensure(top, w.agent, slug)
			if err != nil {
				return failErr(stderr, w.name, err)
			}
			if wt.HandOff != nil {
				say(stderr, "%s", wt.HandOff)
			}
			if push {
				pushIntegration(top, wt.Integration, stderr)
			}
			fmt.Fprintf(stdout, "WORKTREE=%s\nBRANCH=%s\nINTEGRATION=%s\nAGENT_ID=%s\nPROJECT=%s\nPORT=%d\n",
				wt.Path, wt.Branch, wt.Integration, wt.AgentID, wt.Project, wt.Port)
			return exitOK
		}
	})
}

func worktreeListCmd() *cobra.Command {
	return leaf("list", "each agent's branch, port and worktree path", func(fs *pflag.FlagSet) body {
		var w worktreeFlags
		w.flags(fs, "list", false)
		return func(pos []string, stdout, stderr io.Writer) int {
			top, code := w.parse(fs, pos, stderr)
			if code >= 0 {
				return code
			}
			wts, err := look.List(top)
			if err != nil {
				return failErr(stderr, w.name, err)
			}
			ports, err := look.Ports(top)
			if err != nil {
				return failErr(stderr, w.name, err)
			}
			type row struct{ agent, branch, port, path string }
			var rows []row
			for _, wt := range wts {
				rows = append(rows, row{wt.AgentID, wt.Branch, portText(wt.Port), wt.Path})
				delete(ports, wt.AgentID)
			}
			// Workers in the project root hold a port without a worktree.
			for id, p := range ports {
				rows = append(rows, row{id, "-", portText(p), "-"})
			}
			if len(rows) == 0 {
				fmt.Fprintln(stdout, "(no agent worktrees registered)")
				return exitNothing
			}
			sort.Slice(rows, func(i, j int) bool { return rows[i].agent < rows[j].agent })
			tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "AGENT_ID\tBRANCH\tPORT\tPATH")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cell(r.agent), cell(r.branch), r.port, cell(r.path))
			}
			tw.Flush()
			return exitOK
		}
	})
}

func portText(p int) string {
	if p == 0 {
		return "-"
	}
	return strconv.Itoa(p)
}

func worktreePathCmd() *cobra.Command {
	return leaf("path", "print an agent's worktree path", func(fs *pflag.FlagSet) body {
		var w worktreeFlags
		w.flags(fs, "path", true)
		return func(pos []string, stdout, stderr io.Writer) int {
			top, code := w.parse(fs, pos, stderr)
			if code >= 0 {
				return code
			}
			wt, ok, err := look.Lookup(top, w.agent)
			if err != nil {
				return failErr(stderr, w.name, err)
			}
			if !ok {
				return fail(stderr, exitNothing, "%s: no worktree for agent %q", w.name, w.agent)
			}
			fmt.Fprintln(stdout, wt.Path)
			return exitOK
		}
	})
}

func worktreeRemoveCmd() *cobra.Command {
	return leaf("remove", "remove an agent's worktree and free its port (unless that would lose work)", func(fs *pflag.FlagSet) body {
		var w worktreeFlags
		var force, deleteBranch bool
		w.flags(fs, "remove", true)
		forceFlag(fs, &force, "remove the worktree even with uncommitted changes or unmerged commits (the branch is kept)")
		fs.BoolVar(&deleteBranch, "delete-branch", false, "also delete its feature/, feat/ or agent/ branch when the integration branch has all its commits")
		return func(pos []string, stdout, stderr io.Writer) int {
			top, code := w.parse(fs, pos, stderr)
			if code >= 0 {
				return code
			}
			res, err := seat.Remove(top, w.agent, force, deleteBranch)
			if err != nil {
				return failErr(stderr, w.name, err)
			}
			switch {
			case res.Path != "":
				fmt.Fprintf(stdout, "removed worktree %s for agent_id=%s\n", res.Path, w.agent)
			case res.Branch != "":
				fmt.Fprintf(stdout, "removed the registry entry for agent_id=%s (its folder was already gone)\n", w.agent)
			}
			if res.BranchDeleted {
				fmt.Fprintf(stdout, "deleted branch %s\n", res.Branch)
			}
			if res.Port != 0 {
				fmt.Fprintf(stdout, "freed port %d\n", res.Port)
			}
			if res.BranchKept != "" {
				say(stderr, "%s: %s", w.name, res.BranchKept)
			}
			return exitOK
		}
	})
}

func worktreeIntegrationCmd() *cobra.Command {
	return leaf("ensure-integration", "find the integration branch (dev, develop) or create dev", func(fs *pflag.FlagSet) body {
		var w worktreeFlags
		var push bool
		w.flags(fs, "ensure-integration", false)
		fs.BoolVar(&push, "push-integration", false, "push the integration branch to origin when origin lacks it")
		return func(pos []string, stdout, stderr io.Writer) int {
			top, code := w.parse(fs, pos, stderr)
			if code >= 0 {
				return code
			}
			name, created, err := tree.EnsureIntegration(top)
			if err != nil {
				return failErr(stderr, w.name, err)
			}
			if push {
				pushIntegration(top, name, stderr)
			}
			yes := map[bool]string{true: "yes", false: "no"}[created]
			fmt.Fprintf(stdout, "INTEGRATION=%s\nCREATED=%s\n", name, yes)
			return exitOK
		}
	})
}
