package seat

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// Ensure gives agentID its worktree under var/worktrees/, creating it on
// branch agent/<id> from the integration branch, or reusing the registered
// one. With a slug it checks out feature/<slug> there, created from the
// integration branch; when another agent's worktree has that branch checked
// out, that worktree lets go of it first (see handOff) and the event log
// says so. It never resets a branch, so no commit is lost.
func Ensure(project, agentID, slug string) (tree.Worktree, error) {
	top, err := tree.Project(project)
	if err != nil {
		return tree.Worktree{}, err
	}
	unlock, err := tree.LockProject(top)
	if err != nil {
		return tree.Worktree{}, err
	}
	defer unlock()
	if err := tree.IgnoreVar(top); err != nil {
		return tree.Worktree{}, err
	}
	integration, _, err := tree.EnsureIntegration(top)
	if err != nil {
		return tree.Worktree{}, err
	}
	safe := tree.SafeID(agentID)
	path := filepath.Join(top, "var", "worktrees", safe)
	wt := tree.Worktree{AgentID: agentID, Path: path, Integration: integration, Project: top}
	if err := tree.CheckPathOwner(top, agentID, path); err != nil {
		return tree.Worktree{}, err
	}

	registered, err := tree.WorktreeBranches(top)
	if err != nil {
		return tree.Worktree{}, err
	}
	if branch, ok := registered[path]; ok {
		wt.Branch = branch
	} else if wt.Branch, err = addWorktree(top, path, "agent/"+safe, integration, registered); err != nil {
		return tree.Worktree{}, err
	}
	if slug != "" {
		if err := checkoutFeature(project, &wt, slug, registered); err != nil {
			return tree.Worktree{}, err
		}
	}
	if ports, err := look.Ports(top); err == nil {
		wt.Port = ports[agentID]
	}
	return wt, tree.Record(top, wt)
}

// addWorktree makes a new worktree at path on branch base (made from the
// integration branch when missing; a sibling base-wt when base is checked
// out elsewhere) and returns the branch it has.
func addWorktree(top, path, base, integration string, registered map[string]string) (string, error) {
	if _, err := os.Stat(path); err == nil {
		return "", fmt.Errorf("%s exists but is not a registered git worktree; move it away", path)
	}
	if !tree.HasRef(top, "refs/heads/"+base) {
		if _, err := tree.Git(top, "branch", base, model.BranchRef(integration)); err != nil {
			return "", err
		}
	}
	if tree.CheckedOut(registered, base) {
		// The base branch is in use elsewhere (a clone of this id, or a
		// person's checkout): git refuses a second, so take a sibling.
		base += "-wt"
		if !tree.HasRef(top, "refs/heads/"+base) {
			if _, err := tree.Git(top, "branch", base, model.BranchRef(integration)); err != nil {
				return "", err
			}
		}
	}
	if _, err := tree.Git(top, "worktree", "add", path, base); err != nil {
		return "", err
	}
	return base, nil
}

// checkoutFeature checks out slug's feature branch in wt, made from the
// integration branch when missing, taken over from another agent's
// worktree when it has it (see handOff).
func checkoutFeature(project string, wt *tree.Worktree, slug string, registered map[string]string) error {
	branch := tree.FeatureBranch(slug)
	if why := model.CheckBranch(branch); why != "" {
		return fmt.Errorf("git refuses branch name %s (%s); rename the plan", branch, why)
	}
	if holder := tree.HeldElsewhere(registered, branch, wt.Path); wt.Branch != branch && holder != "" {
		h, err := handOff(project, wt.Project, holder, branch, wt.AgentID)
		if err != nil {
			return err
		}
		wt.HandOff = h
		logHandOff(project, slug, wt.AgentID, h)
	}
	if wt.Branch != branch {
		args := []string{"checkout", branch}
		if !tree.HasRef(wt.Project, "refs/heads/"+branch) {
			args = []string{"checkout", "-b", branch, model.BranchRef(wt.Integration)}
		}
		if _, err := tree.Git(wt.Path, args...); err != nil {
			return fmt.Errorf("%s: %v", wt.Path, err)
		}
	}
	wt.Branch = branch
	return nil
}
