package workers

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

// registryFile is where worktrees are recorded, relative to the project.
const registryFile = "var/worktrees/registry.json"

type registry struct {
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
	top, err := git(dir, "rev-parse", "--show-toplevel")
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
	s := strings.Trim(sanitize(id, "._-"), ".-")
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
	names, err := integrationNames(project)
	if err != nil {
		return "", false, err
	}
	for _, name := range names {
		if hasRef(project, "refs/heads/"+name) {
			return name, false, nil
		}
		if hasRef(project, "refs/remotes/origin/"+name) {
			if _, err := git(project, "branch", "--track", name, "refs/remotes/origin/"+name); err != nil {
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
		if hasRef(project, ref) {
			if _, err := git(project, "branch", names[0], ref); err != nil {
				return raced(project, names[0], err)
			}
			return names[0], true, nil
		}
	}
	return "", false, fmt.Errorf("%s: no integration branch (%s) and no trunk (main, master) to make one from", project, strings.Join(names, ", "))
}

// integrationNames are the branches that may be the integration branch, in
// order: the one fleetwatch.yaml names, else dev and develop.
func integrationNames(project string) ([]string, error) {
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
	if hasRef(project, "refs/heads/"+name) {
		return name, false, nil
	}
	return "", false, err
}

// PushIntegration pushes branch to origin, tracking it, when origin does
// not have it yet; it never force-pushes. Without an origin remote it says
// so.
func PushIntegration(project, branch string) error {
	if _, err := git(project, "remote", "get-url", "origin"); err != nil {
		return fmt.Errorf("no origin remote to push %s to", branch)
	}
	if hasRef(project, "refs/remotes/origin/"+branch) {
		return nil
	}
	ref := model.BranchRef(branch)
	_, err := git(project, "push", "-u", "origin", ref+":"+ref)
	return err
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// worktreeBranches maps each registered worktree path to its branch.
func worktreeBranches(top string) (map[string]string, error) {
	out, err := git(top, "worktree", "list", "--porcelain")
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

// heldElsewhere is the worktree other than path that has branch checked
// out, or "".
func heldElsewhere(registered map[string]string, branch, path string) string {
	for p, b := range registered {
		if b == branch && p != path {
			return p
		}
	}
	return ""
}

func checkedOut(registered map[string]string, branch string) bool {
	for _, b := range registered {
		if b == branch {
			return true
		}
	}
	return false
}

// ignoreVar makes sure var/ is git-ignored, so worktrees never show up as
// untracked files of the project: by var/.gitignore, which ignores itself
// too, never by editing the project's tracked .gitignore.
func ignoreVar(top string) error { return planfs.IgnoreVar(top) }

// lockProject serialises worktree changes in one project across processes:
// workers starting together must not race on branches or the registry.
func lockProject(top string) (func(), error) {
	return flockIn(top, filepath.Join(top, "var", "worktrees", ".lock"))
}

// flockIn holds an exclusive flock(2) on the lock file p inside home (made
// if missing, never through a symlink) until the returned func; the kernel
// drops it if the holder dies.
func flockIn(home, p string) (func(), error) {
	if err := mkdirIn(home, filepath.Dir(p)); err != nil {
		return nil, err
	}
	rel, err := relIn(home, p)
	if err != nil {
		return nil, err
	}
	return safepath.Lock(home, rel, 0)
}

func load(top string) (registry, error) {
	reg := registry{Project: top, Agents: map[string]Worktree{}}
	data, err := os.ReadFile(filepath.Join(top, registryFile))
	if errors.Is(err, os.ErrNotExist) {
		return reg, nil
	}
	if err != nil {
		return reg, err
	}
	if err := json.Unmarshal(data, &reg); err != nil {
		return reg, fmt.Errorf("%s: %v", filepath.Join(top, registryFile), err)
	}
	if reg.Agents == nil {
		reg.Agents = map[string]Worktree{}
	}
	return reg, nil
}

// record writes wt into the registry atomically (temp file and rename).
func record(top string, wt Worktree) error {
	reg, err := load(top)
	if err != nil {
		return err
	}
	reg.Agents[wt.AgentID] = wt
	return save(top, reg)
}

// save writes the registry atomically: keys sorted, indent 2, as anchor.
func save(top string, reg registry) error {
	reg.Project = top
	data, err := json.MarshalIndent(reg, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomicIn(top, filepath.Join(top, registryFile), append(data, '\n'))
}

// sanitize replaces every byte that is not an ASCII letter, digit or one of
// extra with `-`.
func sanitize(s, extra string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(extra, c) >= 0) {
			b[i] = '-'
		}
	}
	return string(b)
}

// notOthers refuses path when the registry gives it to another agent id:
// two ids that differ only in characters SafeID replaces would otherwise
// share one checkout.
func notOthers(top, agentID, path string) error {
	reg, err := load(top)
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

func (h *HandOff) String() string {
	s := fmt.Sprintf("%s taken over from agent %s's worktree %s (now detached)", h.Branch, h.FromAgent, h.FromPath)
	if h.KeepRef != "" {
		s += "; its uncommitted changes are kept at " + h.KeepRef
	}
	return s
}
