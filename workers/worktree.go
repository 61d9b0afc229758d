package workers

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
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

// Ensure gives agentID its worktree under var/worktrees/, creating it on
// branch agent/<id> from the integration branch, or reusing the registered
// one. With a slug it checks out feature/<slug> there, created from the
// integration branch; when another agent's worktree has that branch checked
// out, that worktree lets go of it first (see handOff) and the event log
// says so. It never resets a branch, so no commit is lost.
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
	if err := notOthers(top, agentID, path); err != nil {
		return Worktree{}, err
	}

	registered, err := worktreeBranches(top)
	if err != nil {
		return Worktree{}, err
	}
	if branch, ok := registered[path]; ok {
		wt.Branch = branch
	} else if wt.Branch, err = addWorktree(top, path, "agent/"+safe, integration, registered); err != nil {
		return Worktree{}, err
	}
	if slug != "" {
		if err := checkoutFeature(project, &wt, slug, registered); err != nil {
			return Worktree{}, err
		}
	}
	if ports, err := loadPorts(top); err == nil {
		wt.Port = ports.Ports[agentID]
	}
	return wt, record(top, wt)
}

// addWorktree makes a new worktree at path on branch base (made from the
// integration branch when missing; a sibling base-wt when base is checked
// out elsewhere) and returns the branch it has.
func addWorktree(top, path, base, integration string, registered map[string]string) (string, error) {
	if _, err := os.Stat(path); err == nil {
		return "", fmt.Errorf("%s exists but is not a registered git worktree; move it away", path)
	}
	if !hasRef(top, "refs/heads/"+base) {
		if _, err := git(top, "branch", base, model.BranchRef(integration)); err != nil {
			return "", err
		}
	}
	if checkedOut(registered, base) {
		// The base branch is in use elsewhere (a clone of this id, or a
		// person's checkout): git refuses a second, so take a sibling.
		base += "-wt"
		if !hasRef(top, "refs/heads/"+base) {
			if _, err := git(top, "branch", base, model.BranchRef(integration)); err != nil {
				return "", err
			}
		}
	}
	if _, err := git(top, "worktree", "add", path, base); err != nil {
		return "", err
	}
	return base, nil
}

// checkoutFeature checks out slug's feature branch in wt, made from the
// integration branch when missing, taken over from another agent's
// worktree when it has it (see handOff).
func checkoutFeature(project string, wt *Worktree, slug string, registered map[string]string) error {
	branch := FeatureBranch(slug)
	if why := model.CheckBranch(branch); why != "" {
		return fmt.Errorf("git refuses branch name %s (%s); rename the plan", branch, why)
	}
	if holder := heldElsewhere(registered, branch, wt.Path); wt.Branch != branch && holder != "" {
		h, err := handOff(project, wt.Project, holder, branch, wt.AgentID)
		if err != nil {
			return err
		}
		wt.HandOff = h
		logHandOff(project, slug, wt.AgentID, h)
	}
	if wt.Branch != branch {
		args := []string{"checkout", branch}
		if !hasRef(wt.Project, "refs/heads/"+branch) {
			args = []string{"checkout", "-b", branch, model.BranchRef(wt.Integration)}
		}
		if _, err := git(wt.Path, args...); err != nil {
			return fmt.Errorf("%s: %v", wt.Path, err)
		}
	}
	wt.Branch = branch
	return nil
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
	ports, err := loadPorts(top)
	if err != nil {
		return nil, err
	}
	out := make([]Worktree, 0, len(reg.Agents))
	for id, wt := range reg.Agents {
		wt.Port = ports.Ports[id]
		out = append(out, wt)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].AgentID < out[j].AgentID })
	return out, nil
}

// Lookup finds agentID's worktree: its registry entry when the folder is
// there, else the default path var/worktrees/<safe id> when git has a
// worktree there (made by hand or by a registry that was lost) and the
// registry does not give it to another agent id.
func Lookup(project, agentID string) (Worktree, bool, error) {
	top, err := Project(project)
	if err != nil {
		return Worktree{}, false, err
	}
	reg, err := load(top)
	if err != nil {
		return Worktree{}, false, err
	}
	port, _ := PortOf(top, agentID)
	if wt, ok := reg.Agents[agentID]; ok && isDir(wt.Path) {
		wt.Port = port
		return wt, true, nil
	}
	path := filepath.Join(top, "var", "worktrees", SafeID(agentID))
	if notOthers(top, agentID, path) != nil {
		return Worktree{}, false, nil
	}
	registered, err := worktreeBranches(top)
	if err != nil {
		return Worktree{}, false, err
	}
	if branch, ok := registered[path]; ok && isDir(path) {
		return Worktree{AgentID: agentID, Branch: branch, Path: path, Project: top, Port: port}, true, nil
	}
	return Worktree{}, false, nil
}

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
	var out Removal
	top, err := Project(project)
	if err != nil {
		return out, err
	}
	unlock, err := lockProject(top)
	if err != nil {
		return out, err
	}
	defer unlock()
	reg, err := load(top)
	if err != nil {
		return out, err
	}
	rec, inReg := reg.Agents[agentID]
	path := filepath.Join(top, "var", "worktrees", SafeID(agentID))
	if inReg && rec.Path != "" {
		path = rec.Path
	}
	if err := notOthers(top, agentID, path); err != nil {
		return out, err
	}
	if driverRunning(top, agentID) {
		return out, fmt.Errorf("agent %s is running%s; stop it first, then remove", agentID, runningWhat(top, agentID))
	}
	registered, err := worktreeBranches(top)
	if err != nil {
		return out, err
	}
	head, inGit := registered[path]
	onDisk := isDir(path)
	integration := sync.OnceValues(func() (string, error) {
		if rec.Integration != "" && hasRef(top, model.BranchRef(rec.Integration)) {
			return model.BranchRef(rec.Integration), nil
		}
		return findIntegration(top)
	})

	if onDisk && !inGit {
		return out, fmt.Errorf("%s is not a registered git worktree; not removing it (move it away by hand)", path)
	}
	if onDisk {
		if err := checkRemovable(path, head, integration, force); err != nil {
			return out, err
		}
	}
	if err := teardownBefore(top, agentID, path); err != nil {
		return out, err
	}
	if onDisk || inGit {
		if err := removeWorktree(top, path, force); err != nil {
			return out, err
		}
		if onDisk {
			out.Path = path
		}
	}
	if inReg {
		out.Branch = rec.Branch
		if deleteBranch {
			out.BranchDeleted, out.BranchKept = deleteMerged(top, rec.Branch, integration)
		}
		delete(reg.Agents, agentID)
		if err := save(top, reg); err != nil {
			return out, err
		}
	}
	if out.Port, err = freePort(top, agentID); err != nil {
		return out, err
	}
	if !onDisk && !inGit && !inReg && out.Port == 0 {
		return out, fmt.Errorf("%w for agent %q", ErrNothingToRemove, agentID)
	}
	return out, nil
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

// checkRemovable refuses to remove the checkout at path when that would
// lose work: uncommitted changes (unless force), commits of HEAD not in the
// integration branch (unless force), or commits on a detached HEAD that no
// branch, tag or remote holds (always).
func checkRemovable(path, head string, integration func() (string, error), force bool) error {
	status, err := git(path, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	changes, untracked := 0, 0
	for _, line := range strings.Split(status, "\n") {
		if line == "" {
			continue
		}
		changes++
		if strings.HasPrefix(line, "??") {
			untracked++
		}
	}
	if head == "" {
		orphans, err := git(path, "rev-list", "--count", "HEAD", "--not", "--branches", "--tags", "--remotes")
		if err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		if n, _ := strconv.Atoi(orphans); n > 0 {
			return fmt.Errorf("%s: HEAD is detached with %s on no branch; not removing it, even with --force (git branch NAME in it keeps them)", path, plural(n, "commit"))
		}
	}
	if force {
		return nil
	}
	what := "HEAD"
	if head != "" {
		what = head
	}
	var lost []string
	if changes > 0 {
		c := plural(changes, "uncommitted change")
		if untracked > 0 {
			c += fmt.Sprintf(" (%s)", plural(untracked, "untracked file"))
		}
		lost = append(lost, c)
	}
	base, err := integration()
	if err != nil {
		return fmt.Errorf("%s: cannot tell whether %s is merged: %v; --force removes the worktree but keeps the branch", path, what, err)
	}
	ahead, err := git(path, "rev-list", "--count", base+"..HEAD", "--")
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	n, _ := strconv.Atoi(ahead)
	if n > 0 {
		lost = append(lost, fmt.Sprintf("%s on %s not in %s", plural(n, "commit"), what, shortRef(base)))
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

// removeWorktree runs git worktree remove; when git refuses, it prunes and,
// if the folder is still there and nothing uncommitted would be lost (or
// force), removes it with --force.
func removeWorktree(top, path string, force bool) error {
	args := []string{"worktree", "remove"}
	if force {
		args = append(args, "--force")
	}
	_, err := git(top, append(args, path)...)
	if err == nil {
		return nil
	}
	git(top, "worktree", "prune")
	if !isDir(path) {
		return nil
	}
	if !force {
		// Something may have been written since the check.
		if status, serr := git(path, "status", "--porcelain", "--untracked-files=all"); serr != nil || status != "" {
			return fmt.Errorf("could not remove worktree %s: %v", path, err)
		}
	}
	if _, ferr := git(top, "worktree", "remove", "--force", path); ferr != nil && isDir(path) {
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
	case !hasRef(top, "refs/heads/"+branch):
		return false, ""
	}
	base, err := integration()
	if err != nil {
		return false, fmt.Sprintf("kept %s: cannot tell whether it is merged: %v", branch, err)
	}
	ahead, err := git(top, "rev-list", "--count", base+".."+model.BranchRef(branch), "--")
	if err != nil {
		return false, fmt.Sprintf("kept %s: %v", branch, err)
	}
	if n, _ := strconv.Atoi(ahead); n > 0 {
		return false, fmt.Sprintf("kept %s: %s not in %s", branch, plural(n, "commit"), shortRef(base))
	}
	// -D: the commits are in the integration branch, which git branch -d
	// would not look at (it asks HEAD or the upstream).
	if _, err := git(top, "branch", "-D", branch); err != nil {
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
