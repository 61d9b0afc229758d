package workers

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"fleetwatch/internal/atomicfile"
	"golang.org/x/sys/unix"
)

// Worktree is one agent's checkout, as the registry records it.
// Fields are in anchor's (sorted) key order.
type Worktree struct {
	AgentID     string `json:"agent_id"`
	Branch      string `json:"branch"`
	Integration string `json:"integration"`
	Path        string `json:"path"`
	Project     string `json:"project"`
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
	top, err := git(dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, ErrNotGit)
	}
	return top, nil
}

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

// FeatureBranch names the branch for a plan slug: `feature/<slug>`, keeping
// a `feature/` or `feat/` prefix that is already there.
func FeatureBranch(slug string) string {
	s := strings.Trim(sanitize(slug, "._/-"), "/")
	if s == "" {
		s = "work"
	}
	if strings.HasPrefix(s, "feature/") || strings.HasPrefix(s, "feat/") {
		return s
	}
	return "feature/" + s
}

// EnsureIntegration finds the integration branch (dev, origin/dev, develop,
// origin/develop), or creates dev from the trunk (main, origin/main, master,
// origin/master). It reports whether it created one.
func EnsureIntegration(project string) (string, bool, error) {
	for _, name := range []string{"dev", "develop"} {
		if hasRef(project, "refs/heads/"+name) {
			return name, false, nil
		}
		if hasRef(project, "refs/remotes/origin/"+name) {
			if _, err := git(project, "branch", "--track", name, "origin/"+name); err != nil {
				return "", false, err
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
			if _, err := git(project, "branch", "dev", trunk); err != nil {
				return "", false, err
			}
			return "dev", true, nil
		}
	}
	return "", false, fmt.Errorf("%s: no integration branch (dev, develop) and no trunk (main, master) to make one from", project)
}

// Ensure gives agentID its worktree under var/worktrees/, creating it on
// branch agent/<id> from the integration branch, or reusing the registered
// one. With a slug it checks out feature/<slug> there, created from the
// integration branch. It never resets a branch, so no commit is lost.
func Ensure(project, agentID, slug string) (Worktree, error) {
	top, err := Project(project)
	if err != nil {
		return Worktree{}, err
	}
	unlock, err := lockProject(top)
	if err != nil {
		return Worktree{}, err
	}
	defer unlock()
	if err := ignoreVar(top); err != nil {
		return Worktree{}, err
	}
	integration, _, err := EnsureIntegration(top)
	if err != nil {
		return Worktree{}, err
	}
	safe := SafeID(agentID)
	path := filepath.Join(top, "var", "worktrees", safe)
	wt := Worktree{AgentID: agentID, Path: path, Integration: integration, Project: top}

	registered, err := worktreeBranches(top)
	if err != nil {
		return Worktree{}, err
	}
	if branch, ok := registered[path]; ok {
		wt.Branch = branch
	} else {
		if _, err := os.Stat(path); err == nil {
			return Worktree{}, fmt.Errorf("%s exists but is not a registered git worktree; move it away", path)
		}
		base := "agent/" + safe
		if !hasRef(top, "refs/heads/"+base) {
			if _, err := git(top, "branch", base, integration); err != nil {
				return Worktree{}, err
			}
		}
		if checkedOut(registered, base) {
			// The base branch is in use elsewhere (a clone of this id, or a
			// person's checkout): git refuses a second, so take a sibling.
			base += "-wt"
			if !hasRef(top, "refs/heads/"+base) {
				if _, err := git(top, "branch", base, integration); err != nil {
					return Worktree{}, err
				}
			}
		}
		if _, err := git(top, "worktree", "add", path, base); err != nil {
			return Worktree{}, err
		}
		wt.Branch = base
	}
	if slug != "" {
		branch := FeatureBranch(slug)
		if wt.Branch != branch {
			args := []string{"checkout", branch}
			if !hasRef(top, "refs/heads/"+branch) {
				args = []string{"checkout", "-b", branch, integration}
			}
			if _, err := git(path, args...); err != nil {
				return Worktree{}, fmt.Errorf("%s: %v", path, err)
			}
		}
		wt.Branch = branch
	}
	return wt, record(top, wt)
}

// List returns the registered worktrees, by agent id.
func List(project string) ([]Worktree, error) {
	top, err := Project(project)
	if err != nil {
		return nil, err
	}
	reg, err := load(top)
	if err != nil {
		return nil, err
	}
	out := make([]Worktree, 0, len(reg.Agents))
	for _, wt := range reg.Agents {
		out = append(out, wt)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].AgentID < out[j].AgentID })
	return out, nil
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

func checkedOut(registered map[string]string, branch string) bool {
	for _, b := range registered {
		if b == branch {
			return true
		}
	}
	return false
}

// ignoreVar makes sure var/ is git-ignored, so worktrees never show up as
// untracked files of the project.
func ignoreVar(top string) error {
	p := filepath.Join(top, ".gitignore")
	data, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, line := range strings.Split(string(data), "\n") {
		switch strings.TrimSpace(line) {
		case "var", "var/", "/var", "/var/", "var/*", "/var/*":
			return nil
		}
	}
	add := "# agent worktrees and fleet state (fleetwatch)\nvar/\n"
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		add = "\n" + add
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(add)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// lockProject serialises worktree changes in one project across processes:
// workers starting together must not race on branches or the registry.
func lockProject(top string) (func(), error) {
	dir := filepath.Join(top, "var", "worktrees")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
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
	reg.Project = top
	reg.Agents[wt.AgentID] = wt
	data, err := json.MarshalIndent(reg, "", "  ")
	if err != nil {
		return err
	}
	p := filepath.Join(top, registryFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(p, append(data, '\n'), 0o644)
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
