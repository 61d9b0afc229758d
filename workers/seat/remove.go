package seat

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// ErrNothingToRemove means an agent has no worktree, registry entry or port.
var ErrNothingToRemove = errors.New("nothing to remove")

// Removal is what Remove did.
type Removal struct {
	Path          string // the worktree removed; "" when there was none on disk
	Branch        string // its recorded branch
	BranchDeleted bool   // deleteBranch deleted Branch
	BranchKept    string // when deleteBranch kept a branch: one line saying why
	Port          int    // the port given back (0: none)
}

// deletable are the branch prefixes remove --delete-branch may delete, as
// anchor: never a trunk or integration branch.
var deletable = []string{"feature/", "feat/", "agent/"}

// Remove takes agentID's worktree away: the checkout (git worktree remove;
// prune, then --force, as fallbacks), its registry entry and its port. It
// never loses work: it refuses when the checkout has uncommitted changes,
// untracked files included, or its HEAD has commits not in the integration
// branch, unless force; even with force it refuses a detached HEAD whose
// commits are on no branch, since nothing would keep them. With
// deleteBranch it deletes the recorded branch when it starts with
// feature/, feat/ or agent/ and every commit on it is in the integration
// branch; otherwise it keeps the branch and says why in BranchKept.
func Remove(project, agentID string, force, deleteBranch bool) (Removal, error) {
	top, err := tree.Project(project)
	if err != nil {
		return Removal{}, err
	}
	unlock, err := tree.LockProject(top)
	if err != nil {
		return Removal{}, err
	}
	defer unlock()
	r, err := removalOf(top, agentID)
	if err != nil {
		return Removal{}, err
	}
	if err := r.checkout(force); err != nil {
		return r.out, err
	}
	if err := r.forget(deleteBranch); err != nil {
		return r.out, err
	}
	if r.out.Port, err = look.FreePort(top, agentID); err != nil {
		return r.out, err
	}
	if !r.onDisk && !r.inGit && !r.inReg && r.out.Port == 0 {
		return r.out, fmt.Errorf("%w for agent %q", ErrNothingToRemove, agentID)
	}
	return r.out, nil
}

// removal is one Remove under the project's lock: what the registry and
// git say of agentID's worktree, and what was done so far.
type removal struct {
	top, agentID string
	reg          tree.Registry
	rec          tree.Worktree
	inReg        bool
	path, head   string
	inGit        bool // git lists path as a worktree
	onDisk       bool
	integration  func() (string, error)
	out          Removal
}

// removalOf reads agentID's worktree in top, and refuses one that another
// agent's id also names, or whose driver runs.
func removalOf(top, agentID string) (*removal, error) {
	reg, err := tree.LoadRegistry(top)
	if err != nil {
		return nil, err
	}
	r := &removal{top: top, agentID: agentID, reg: reg}
	r.rec, r.inReg = reg.Agents[agentID]
	r.path = filepath.Join(top, "var", "worktrees", tree.SafeID(agentID))
	if r.inReg && r.rec.Path != "" {
		r.path = r.rec.Path
	}
	if err := tree.CheckPathOwner(top, agentID, r.path); err != nil {
		return nil, err
	}
	if proc.DriverRunning(top, agentID) {
		return nil, fmt.Errorf("agent %s is running%s; stop it first, then remove", agentID, proc.RunningWhat(top, agentID))
	}
	registered, err := tree.WorktreeBranches(top)
	if err != nil {
		return nil, err
	}
	r.head, r.inGit = registered[r.path]
	r.onDisk = tree.IsDir(r.path)
	r.integration = sync.OnceValues(func() (string, error) {
		if r.rec.Integration != "" && tree.HasRef(top, model.BranchRef(r.rec.Integration)) {
			return model.BranchRef(r.rec.Integration), nil
		}
		return look.FindIntegration(top)
	})
	return r, nil
}

// checkout removes the worktree's checkout, once it loses no work, and
// its backend before it.
func (r *removal) checkout(force bool) error {
	if r.onDisk && !r.inGit {
		return fmt.Errorf("%s is not a registered git worktree; not removing it (move it away by hand)", r.path)
	}
	if r.onDisk {
		if err := checkRemovable(r.path, r.head, r.integration, force); err != nil {
			return err
		}
	}
	if err := teardownBefore(r.top, r.agentID, r.path); err != nil {
		return err
	}
	if r.onDisk || r.inGit {
		if err := removeWorktree(r.top, r.path, force); err != nil {
			return err
		}
		if r.onDisk {
			r.out.Path = r.path
		}
	}
	return nil
}

// forget drops the registry entry, and with deleteBranch its branch when
// every commit on it is in the integration branch.
func (r *removal) forget(deleteBranch bool) error {
	if !r.inReg {
		return nil
	}
	r.out.Branch = r.rec.Branch
	if deleteBranch {
		r.out.BranchDeleted, r.out.BranchKept = deleteMerged(r.top, r.rec.Branch, r.integration)
	}
	delete(r.reg.Agents, r.agentID)
	return tree.SaveRegistry(r.top, r.reg)
}

// checkRemovable refuses to remove the checkout at path when that would
// lose work: uncommitted changes (unless force), commits of HEAD not in the
// integration branch (unless force), or commits on a detached HEAD that no
// branch, tag or remote holds (always).
func checkRemovable(path, head string, integration func() (string, error), force bool) error {
	status, err := tree.Git(path, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	changes, untracked := countChanges(status)
	if head == "" {
		if err := detachedOrphans(path); err != nil {
			return err
		}
	}
	if force {
		return nil
	}
	what := cmp.Or(head, "HEAD")
	var lost []string
	if changes > 0 {
		lost = append(lost, changesWords(changes, untracked))
	}
	base, err := integration()
	if err != nil {
		return fmt.Errorf("%s: cannot tell whether %s is merged: %v; --force removes the worktree but keeps the branch", path, what, err)
	}
	ahead, err := tree.Git(path, "rev-list", "--count", base+"..HEAD", "--")
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	n, _ := strconv.Atoi(ahead)
	if n > 0 {
		lost = append(lost, fmt.Sprintf("%s on %s not in %s", plural(n, "commit"), what, look.ShortRef(base)))
	}
	switch {
	case len(lost) == 0:
		return nil
	case changes == 0:
		return fmt.Errorf("%s: %s; --force removes the worktree but keeps the branch", path, lost[0])
	case n == 0:
		return fmt.Errorf("%s: %s would be lost; commit them, or --force discards them", path, lost[0])
	}
	return fmt.Errorf("%s: %s would be lost, and %s; commit them, or --force discards the changes and keeps the branch", path, lost[0], lost[1])
}

// countChanges counts git status --porcelain's lines, and the untracked
// files among them.
func countChanges(status string) (changes, untracked int) {
	for _, line := range strings.Split(status, "\n") {
		if line == "" {
			continue
		}
		changes++
		if strings.HasPrefix(line, "??") {
			untracked++
		}
	}
	return changes, untracked
}

// detachedOrphans refuses a detached HEAD at path with commits no branch,
// tag or remote holds.
func detachedOrphans(path string) error {
	orphans, err := tree.Git(path, "rev-list", "--count", "HEAD", "--not", "--branches", "--tags", "--remotes")
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	if n, _ := strconv.Atoi(orphans); n > 0 {
		return fmt.Errorf("%s: HEAD is detached with %s on no branch; not removing it, even with --force (git branch NAME in it keeps them)", path, plural(n, "commit"))
	}
	return nil
}

// changesWords says how many uncommitted changes, and untracked files
// among them.
func changesWords(changes, untracked int) string {
	c := plural(changes, "uncommitted change")
	if untracked > 0 {
		c += fmt.Sprintf(" (%s)", plural(untracked, "untracked file"))
	}
	return c
}

// removeWorktree runs git worktree remove; when git refuses, it prunes and,
// if the folder is still there and nothing uncommitted would be lost (or
// force), removes it with --force.
func removeWorktree(top, path string, force bool) error {
	args := []string{"worktree", "remove"}
	if force {
		args = append(args, "--force")
	}
	_, err := tree.Git(top, append(args, path)...)
	if err == nil {
		return nil
	}
	tree.Git(top, "worktree", "prune")
	if !tree.IsDir(path) {
		return nil
	}
	if !force {
		// Something may have been written since the check.
		if status, serr := tree.Git(path, "status", "--porcelain", "--untracked-files=all"); serr != nil || status != "" {
			return fmt.Errorf("could not remove worktree %s: %v", path, err)
		}
	}
	if _, ferr := tree.Git(top, "worktree", "remove", "--force", path); ferr != nil && tree.IsDir(path) {
		return fmt.Errorf("could not remove worktree %s: %v", path, ferr)
	}
	return nil
}

// deleteMerged deletes branch when remove --delete-branch may: it starts
// with a deletable prefix and the integration branch has every commit of
// it. Otherwise it says, in one line, why the branch was kept.
func deleteMerged(top, branch string, integration func() (string, error)) (bool, string) {
	ok := false
	for _, p := range deletable {
		ok = ok || strings.HasPrefix(branch, p)
	}
	switch {
	case branch == "":
		return false, ""
	case !ok:
		return false, fmt.Sprintf("kept %s: only feature/, feat/ and agent/ branches are deleted", branch)
	case !tree.HasRef(top, "refs/heads/"+branch):
		return false, ""
	}
	base, err := integration()
	if err != nil {
		return false, fmt.Sprintf("kept %s: cannot tell whether it is merged: %v", branch, err)
	}
	ahead, err := tree.Git(top, "rev-list", "--count", base+".."+model.BranchRef(branch), "--")
	if err != nil {
		return false, fmt.Sprintf("kept %s: %v", branch, err)
	}
	if n, _ := strconv.Atoi(ahead); n > 0 {
		return false, fmt.Sprintf("kept %s: %s not in %s", branch, plural(n, "commit"), look.ShortRef(base))
	}
	// -D: the commits are in the integration branch, which git branch -d
	// would not look at (it asks HEAD or the upstream).
	if _, err := tree.Git(top, "branch", "-D", branch); err != nil {
		return false, fmt.Sprintf("kept %s: %v", branch, err)
	}
	return true, ""
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
