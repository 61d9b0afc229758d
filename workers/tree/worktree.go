package tree

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// Worktree is one agent's checkout, as the registry records it.
// Fields are in anchor's (sorted) key order.
type Worktree struct {
	AgentID     string `json:"agent_id"`
	Branch      string `json:"branch"`
	Integration string `json:"integration"`
	Path        string `json:"path"`
	Project     string `json:"project"`
	// Port is the agent's recorded port (0: none). It lives in ports.json,
	// never in the registry (see portsFile).
	Port int `json:"-"`
	// HandOff is set when Ensure took the branch from another agent's
	// worktree; never recorded.
	HandOff *HandOff `json:"-"`
}

// RegistryFile is where worktrees are recorded, relative to the project.
const RegistryFile = "var/worktrees/registry.json"

// Registry is var/worktrees/registry.json: each agent id's worktree, in
// anchor's format.
type Registry struct {
	Agents  map[string]Worktree `json:"agents"`
	Project string              `json:"project"`
}

// ErrNotGit means the project is not inside a git repository.
var ErrNotGit = errors.New("not a git repository")

// Project returns the git top level of dir.
func Project(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err == nil {
		if _, known := tops.Load(abs); known {
			if _, err := os.Lstat(filepath.Join(abs, ".git")); err == nil {
				return abs, nil
			}
			tops.Delete(abs)
		}
	}
	top, err := Git(dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, ErrNotGit)
	}
	if top == abs {
		tops.Store(abs, true)
	}
	return top, nil
}

// tops are the directories git named their own top level: a face asks
// at every refresh, and while dir/.git is there the answer cannot change
// (no repository can appear between a directory and itself).
var tops sync.Map

// SafeID turns an agent id into a path and branch component: characters
// outside [A-Za-z0-9._-] become `-`, dots and dashes are trimmed from the
// ends, and the result is at most 80 characters ("agent" when nothing is left).
func SafeID(id string) string {
	s := strings.Trim(Sanitize(id, "._-"), ".-")
	if len(s) > 80 {
		s = strings.TrimRight(s[:80], ".-")
	}
	if s == "" {
		return "agent"
	}
	return s
}

// FeatureBranch names the branch for a plan slug (model.FeatureBranch).
func FeatureBranch(slug string) string { return model.FeatureBranch(slug) }

// EnsureIntegration finds the integration branch: fleetwatch.yaml's
// `integration:`, else dev, else develop (each local, else origin's, which
// gets a tracking branch), or creates the first of those from the trunk
// (main, origin/main, master, origin/master). It reports whether it created
// one.
func EnsureIntegration(project string) (string, bool, error) {
	names, err := IntegrationNames(project)
	if err != nil {
		return "", false, err
	}
	for _, name := range names {
		if HasRef(project, "refs/heads/"+name) {
			return name, false, nil
		}
		if HasRef(project, "refs/remotes/origin/"+name) {
			if _, err := Git(project, "branch", "--track", name, "refs/remotes/origin/"+name); err != nil {
				return raced(project, name, err)
			}
			return name, true, nil
		}
	}
	for _, trunk := range []string{"main", "origin/main", "master", "origin/master"} {
		ref := "refs/heads/" + trunk
		if strings.HasPrefix(trunk, "origin/") {
			ref = "refs/remotes/" + trunk
		}
		if HasRef(project, ref) {
			if _, err := Git(project, "branch", names[0], ref); err != nil {
				return raced(project, names[0], err)
			}
			return names[0], true, nil
		}
	}
	return "", false, fmt.Errorf("%s: no integration branch (%s) and no trunk (main, master) to make one from", project, strings.Join(names, ", "))
}

// IntegrationNames are the branches that may be the integration branch, in
// order: the one fleetwatch.yaml names, else dev and develop.
func IntegrationNames(project string) ([]string, error) {
	s, err := config.Load(project)
	if err != nil {
		return nil, err
	}
	if s.Integration != "" {
		return []string{s.Integration}, nil
	}
	return []string{"dev", "develop"}, nil
}

// raced is EnsureIntegration's answer when creating name failed: another
// process (an anchor worker takes no lock) may have just made it.
func raced(project, name string, err error) (string, bool, error) {
	if HasRef(project, "refs/heads/"+name) {
		return name, false, nil
	}
	return "", false, err
}

// PushIntegration pushes branch to origin, tracking it, when origin does
// not have it yet; it never force-pushes. Without an origin remote it says
// so.
func PushIntegration(project, branch string) error {
	if _, err := Git(project, "remote", "get-url", "origin"); err != nil {
		return fmt.Errorf("no origin remote to push %s to", branch)
	}
	if HasRef(project, "refs/remotes/origin/"+branch) {
		return nil
	}
	ref := model.BranchRef(branch)
	_, err := Git(project, "push", "-u", "origin", ref+":"+ref)
	return err
}

// IsDir reports whether path is a folder, a symlink to one included.
func IsDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// WorktreeBranches maps each registered worktree path to its branch.
func WorktreeBranches(top string) (map[string]string, error) {
	out, err := Git(top, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	path := ""
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "worktree "):
			path = strings.TrimPrefix(line, "worktree ")
			m[path] = ""
		case strings.HasPrefix(line, "branch "):
			m[path] = strings.TrimPrefix(strings.TrimPrefix(line, "branch "), "refs/heads/")
		}
	}
	return m, nil
}

// HeldElsewhere is the worktree other than path that has branch checked
// out, or "".
func HeldElsewhere(registered map[string]string, branch, path string) string {
	for p, b := range registered {
		if b == branch && p != path {
			return p
		}
	}
	return ""
}

// CheckedOut reports whether branch is checked out in one of the
// registered worktrees (path → branch, as WorktreeBranches lists them).
func CheckedOut(registered map[string]string, branch string) bool {
	for _, b := range registered {
		if b == branch {
			return true
		}
	}
	return false
}

// IgnoreVar makes sure var/ is git-ignored, so worktrees never show up as
// untracked files of the project: by var/.gitignore, which ignores itself
// too, never by editing the project's tracked .gitignore.
func IgnoreVar(top string) error { return planfs.IgnoreVar(top) }

// LockProject serialises worktree changes in one project across processes:
// workers starting together must not race on branches or the registry.
func LockProject(top string) (func(), error) {
	return FlockIn(top, filepath.Join(top, "var", "worktrees", ".lock"))
}

// FlockIn holds an exclusive flock(2) on the lock file p inside home (made
// if missing, never through a symlink) until the returned func; the kernel
// drops it if the holder dies.
func FlockIn(home, p string) (func(), error) {
	if err := MkdirIn(home, filepath.Dir(p)); err != nil {
		return nil, err
	}
	rel, err := RelIn(home, p)
	if err != nil {
		return nil, err
	}
	return safepath.Lock(home, rel, 0)
}

// LoadRegistry reads top's worktree registry; a missing file is an
// empty registry.
func LoadRegistry(top string) (Registry, error) {
	reg := Registry{Project: top, Agents: map[string]Worktree{}}
	data, err := os.ReadFile(filepath.Join(top, RegistryFile))
	if errors.Is(err, os.ErrNotExist) {
		return reg, nil
	}
	if err != nil {
		return reg, err
	}
	if err := json.Unmarshal(data, &reg); err != nil {
		return reg, fmt.Errorf("%s: %v", filepath.Join(top, RegistryFile), err)
	}
	if reg.Agents == nil {
		reg.Agents = map[string]Worktree{}
	}
	return reg, nil
}

// Record writes wt into the registry atomically (temp file and rename).
func Record(top string, wt Worktree) error {
	reg, err := LoadRegistry(top)
	if err != nil {
		return err
	}
	reg.Agents[wt.AgentID] = wt
	return SaveRegistry(top, reg)
}

// SaveRegistry writes the registry atomically: keys sorted, indent 2, as anchor.
func SaveRegistry(top string, reg Registry) error {
	reg.Project = top
	data, err := json.MarshalIndent(reg, "", "  ")
	if err != nil {
		return err
	}
	return WriteAtomicIn(top, filepath.Join(top, RegistryFile), append(data, '\n'))
}

// Sanitize replaces every byte that is not an ASCII letter, digit or one of
// extra with `-`.
func Sanitize(s, extra string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(extra, c) >= 0) {
			b[i] = '-'
		}
	}
	return string(b)
}

// CheckPathOwner refuses path when the registry gives it to another agent id:
// two ids that differ only in characters SafeID replaces would otherwise
// share one checkout.
func CheckPathOwner(top, agentID, path string) error {
	reg, err := LoadRegistry(top)
	if err != nil {
		return err
	}
	for id, other := range reg.Agents {
		if id != agentID && other.Path == path {
			return fmt.Errorf("%s is the worktree of agent %q: agent ids %q and %q both become %q; make them differ in letters or digits", path, id, id, agentID, filepath.Base(path))
		}
	}
	return nil
}

// HandOff is what Ensure did to give a new owner a feature branch that was
// checked out in another agent's worktree.
type HandOff struct {
	Branch    string
	FromAgent string // the agent whose worktree let go of the branch
	FromPath  string
	// KeepRef holds that worktree's uncommitted changes, untracked files
	// included, as a commit on top of its HEAD; "" when it was clean.
	KeepRef string
}

// String is the hand-off as the event log and the CLI say it.
func (h *HandOff) String() string {
	s := fmt.Sprintf("%s taken over from agent %s's worktree %s (now detached)", h.Branch, h.FromAgent, h.FromPath)
	if h.KeepRef != "" {
		s += "; its uncommitted changes are kept at " + h.KeepRef
	}
	return s
}
