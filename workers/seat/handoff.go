package seat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// handOff makes the worktree at holder let go of branch so agentID can
// check it out: a plan released, stopped, parked and returned or recovered
// goes on with every commit its first agent made. The old worktree's
// uncommitted changes are first committed to a keep ref, then it detaches
// at the same commit, so its files stay as they were and nothing is lost.
// Only agent worktrees under var/worktrees/ are touched, never a person's
// checkout, and never one whose driver still works a plan on that branch.
func handOff(project, top, holder, branch, agentID string) (*tree.HandOff, error) {
	if filepath.Dir(holder) != filepath.Join(top, "var", "worktrees") {
		return nil, fmt.Errorf("%s is checked out in %s, which is not an agent worktree; check out another branch there", branch, holder)
	}
	from := holderAgent(top, holder)
	h := &tree.HandOff{Branch: branch, FromAgent: from, FromPath: holder}
	if !tree.IsDir(holder) {
		// Its folder is gone: git only has to forget it.
		if _, err := tree.Git(top, "worktree", "prune"); err != nil {
			return nil, err
		}
		return h, nil
	}
	if proc.DriverRunning(top, from) && workingOn(project, from, branch) {
		return nil, fmt.Errorf("%s is checked out in %s, where agent %s still works on it%s; try again once it stops", branch, holder, from, proc.RunningWhat(top, from))
	}
	// A driver that died mid-run left its agent's commits in its own
	// store: they go with the branch.
	if _, err := proc.StopLeftovers(project, from); err != nil {
		return nil, fmt.Errorf("%s: %v, so %s stays there", holder, err, branch)
	}
	status, err := tree.Git(holder, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return nil, fmt.Errorf("%s: %v", holder, err)
	}
	if status != "" {
		if h.KeepRef, err = keepChanges(holder, from, branch, agentID); err != nil {
			return nil, fmt.Errorf("%s: cannot keep its uncommitted changes, so %s stays there: %v", holder, branch, err)
		}
	}
	if _, err := tree.Git(holder, "checkout", "--quiet", "--detach"); err != nil {
		return nil, fmt.Errorf("%s: cannot let go of %s: %v", holder, branch, err)
	}
	forgetBranch(top, from, branch)
	return h, nil
}

// holderAgent is the agent whose worktree is holder, by the registry, else
// the worktree's folder name.
func holderAgent(top, holder string) string {
	from := filepath.Base(holder)
	if reg, err := tree.LoadRegistry(top); err == nil {
		for id, w := range reg.Agents {
			if w.Path == holder {
				from = id
			}
		}
	}
	return from
}

// forgetBranch clears agent from's branch in the registry when it is
// branch, which it has let go of.
func forgetBranch(top, from, branch string) {
	reg, err := tree.LoadRegistry(top)
	if err != nil {
		return
	}
	if w, ok := reg.Agents[from]; ok && w.Branch == branch {
		w.Branch = ""
		reg.Agents[from] = w
		_ = tree.SaveRegistry(top, reg)
	}
}

// workingOn reports whether agent holds an active lease on an in-progress
// plan whose feature branch is branch (two slugs can share one). When the
// tree cannot be read it says yes: a running agent's branch is not taken
// on a guess.
func workingOn(project, agent, branch string) bool {
	t, err := planfs.Open(project)
	if err != nil {
		return true
	}
	entries, err := os.ReadDir(filepath.Join(t.Plans, string(model.InProgress)))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	now := t.NowSeconds()
	for _, e := range entries {
		rel := string(model.RelOf(model.InProgress, e.Name()))
		if !strings.HasSuffix(e.Name(), ".md") || model.FeatureBranch(model.SlugOf(e.Name())) != branch {
			continue
		}
		if l := t.ReadLease(rel); l != nil && (l.Corrupt != "" || l.Active(now) && l.AgentID == agent) {
			return true
		}
	}
	return false
}

// keepChanges commits everything in dir's work tree, untracked files
// included (ignored ones are not), on top of its HEAD to
// refs/fleetwatch/keep/<agent>/<unix>, through a temporary index: the
// worktree's branch, index and files are left as they were.
func keepChanges(dir, agent, branch, newOwner string) (string, error) {
	msg := fmt.Sprintf("fleetwatch: uncommitted work of agent %s in %s, kept before %s went to %s", agent, dir, branch, newOwner)
	commit, err := tree.SnapshotCommit(dir, msg, tree.GitTimeout)
	if err != nil {
		return "", err
	}
	ref := fmt.Sprintf("refs/fleetwatch/keep/%s/%d", keepName(agent), time.Now().Unix())
	for i := 0; ; i++ {
		r := ref
		if i > 0 {
			r = fmt.Sprintf("%s-%d", ref, i)
		}
		// Create-only (old value empty): a keep ref is never overwritten.
		_, err := tree.Git(dir, "update-ref", r, commit, "")
		if err == nil {
			return r, nil
		}
		if i == 9 {
			return "", err
		}
	}
}

// keepName is agent as one ref component git accepts: no dots (`..`,
// `.lock`), nothing outside [A-Za-z0-9_-].
func keepName(agent string) string {
	if s := strings.Trim(tree.Sanitize(agent, "_-"), "-"); s != "" {
		return s
	}
	return "agent"
}

// logHandOff appends the hand-off to the project's event log, when it has
// a plan tree.
func logHandOff(project, slug, agentID string, h *tree.HandOff) {
	if t, err := planfs.Open(project); err == nil {
		t.LogEvent(planfs.Event{Event: "handoff", Slug: slug, AgentID: agentID, Reason: h.String()})
	}
}
