package workers

import (
	"fmt"
	"path"
	"slices"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// A build that exits 0 without a commit on its branch is not a change to
// review: its checks would run on the integration branch's own tree and
// its approval could only fail. The driver parks it in blocked/ saying
// so, or, under an endpoint's `commit: auto`, commits what the agent left
// in its worktree as fleetwatch.

// Who an auto-commit is by: fleetwatch, never the agent.
const (
	autoCommitName  = "fleetwatch"
	autoCommitEmail = "fleetwatch@localhost"
)

// branchTip is the worktree's HEAD as the project's store has it (a
// contained agent's commits are there once brought); "" when unborn.
func branchTip(wt string) string {
	tip, _ := tree.Git(wt, "rev-parse", "--verify", "-q", "HEAD")
	return tip
}

// checksCommit reports whether job's exit 0 must have made a commit: a
// build in a worktree.
func checksCommit(job Job) bool {
	return job.Worktree != "" && (job.Mode == "" || job.Mode == proc.ModeBuild)
}

// noCommit handles a build's exit 0 once the branch is brought: over is
// true when it made no commit and the plan was parked in blocked/
// instead of going on to review.
func (d *Driver) noCommit(r *running, o Outcome) (Outcome, bool) {
	job := r.job
	if !checksCommit(job) || branchTip(job.Worktree) != r.startTip {
		return o, false
	}
	left, err := uncommitted(job.Worktree)
	what := leftWords(len(left))
	if err != nil {
		// Never "nothing changed" when git could not say.
		what = "its worktree could not be read: " + tree.ErrText(err)
	}
	if d.AutoCommit && len(left) > 0 {
		tip, err := d.autoCommit(r, left)
		if err == nil {
			d.Log.Printf("agent exited 0 but made no commit: fleetwatch committed %s it left (%.12s)", countFiles(len(left)), tip)
			return o, false
		}
		d.Log.Printf("commit: auto could not commit the agent's edits: %v", tree.ErrText(err))
	}
	reason := "agent exited 0 but made no commit: " + what
	d.Log.Printf("%s", reason)
	return d.parkBlocked(r, reason), true
}

// uncommitted lists the worktree's changed and untracked files (ignored
// ones are not the agent's change), without .env.fleetwatch. A submodule
// counts when its checked-out commit moved; its own work tree is not
// looked into, since git would run a git there in whatever repository the
// agent put in that folder.
func uncommitted(wt string) ([]string, error) {
	out, err := tree.Git(wt, "status", "--porcelain=v2", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=dirty")
	if err != nil {
		return nil, err
	}
	paths := slices.DeleteFunc(statusPaths(out), func(p string) bool { return p == tree.EnvFile || p == "" })
	slices.Sort(paths)
	return slices.Compact(paths), nil
}

// autoCommit commits everything the agent left in its worktree on its
// branch, authored and committed by fleetwatch, and records it in the
// event log. git runs pinned to the worktree's admin folder with no hook
// (gitenv), so nothing of the agent's runs in the driver.
func (d *Driver) autoCommit(r *running, paths []string) (string, error) {
	wt := r.job.Worktree
	if _, err := tree.Git(wt, "add", "-A", "--", "."); err != nil {
		return "", err
	}
	slug := model.SlugOf(path.Base(r.job.Rel))
	msg := fmt.Sprintf("fleetwatch: commit %s's uncommitted edits for %s\n\n%s exited 0 without committing; the endpoint says commit: auto.",
		d.Worker.AgentID, slug, d.Worker.AgentID)
	who := []string{
		"GIT_AUTHOR_NAME=" + autoCommitName, "GIT_AUTHOR_EMAIL=" + autoCommitEmail,
		"GIT_COMMITTER_NAME=" + autoCommitName, "GIT_COMMITTER_EMAIL=" + autoCommitEmail,
	}
	if _, err := tree.RunGit(tree.GitTimeout, who, wt, "commit", "-q", "--no-verify", "-m", msg); err != nil {
		return "", err
	}
	tip := branchTip(wt)
	d.Tree.LogEvent(planfs.Event{
		Event: "auto-commit", Slug: slug, From: r.job.Rel, To: r.job.Rel, AgentID: d.Worker.AgentID,
		Paths: paths[:min(len(paths), look.MaxTouched)], Reason: fmt.Sprintf("committed %s the agent left, as %.12s", countFiles(len(paths)), tip),
	})
	return tip, nil
}

func countFiles(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}

// leftWords says what the agent left: "1 file changed, not committed", or
// "nothing changed".
func leftWords(n int) string {
	if n == 0 {
		return "nothing changed"
	}
	return countFiles(n) + " changed, not committed"
}
