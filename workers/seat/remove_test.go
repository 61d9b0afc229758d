package seat

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

func commitIn(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
		t.Fatal(err)
	}
	testkit.Git(t, dir, "add", name)
	testkit.Git(t, dir, "commit", "-q", "-m", name)
}

func hasBranch(t *testing.T, dir, branch string) bool {
	t.Helper()
	return testkit.Git(t, dir, "branch", "--list", branch) != ""
}

// refused checks Remove failed with one line naming the worktree and want,
// and that the checkout and its registry entry are still there.
func refused(t *testing.T, dir string, wt tree.Worktree, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), wt.Path) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v, want one line with %s and %q", err, wt.Path, want)
	}
	if !tree.IsDir(wt.Path) {
		t.Fatal("the worktree is gone")
	}
	if list, _ := look.List(dir); len(list) != 1 {
		t.Fatalf("registry lost the entry: %+v", list)
	}
}

func TestRemoveRefusesUncommitted(t *testing.T) {
	dir, wt := ensured(t, "w", "x")
	os.WriteFile(filepath.Join(wt.Path, "README"), []byte("changed\n"), 0o644)
	_, err := Remove(dir, "w", false, false)
	refused(t, dir, wt, err, "1 uncommitted change would be lost; commit them, or --force discards them")
}

func TestRemoveRefusesUntracked(t *testing.T) {
	dir, wt := ensured(t, "w", "x")
	os.MkdirAll(filepath.Join(wt.Path, "new", "deep"), 0o755)
	os.WriteFile(filepath.Join(wt.Path, "new", "deep", "a"), nil, 0o644)
	os.WriteFile(filepath.Join(wt.Path, "b"), nil, 0o644)
	_, err := Remove(dir, "w", false, true)
	refused(t, dir, wt, err, "2 uncommitted changes (2 untracked files) would be lost")
}

func TestRemoveRefusesUnmerged(t *testing.T) {
	dir, wt := ensured(t, "w", "x")
	commitIn(t, wt.Path, "one")
	commitIn(t, wt.Path, "two")
	_, err := Remove(dir, "w", false, true)
	refused(t, dir, wt, err, "2 commits on feature/x not in dev; --force removes the worktree but keeps the branch")
	os.WriteFile(filepath.Join(wt.Path, "three"), nil, 0o644)
	_, err = Remove(dir, "w", false, false)
	refused(t, dir, wt, err, "1 uncommitted change (1 untracked file) would be lost, and 2 commits on feature/x not in dev; commit them, or --force discards the changes and keeps the branch")
}

// --force removes a dirty, unmerged worktree, but --delete-branch still
// keeps the branch, commits and all.
func TestRemoveForceKeepsUnmergedBranch(t *testing.T) {
	dir, wt := ensured(t, "w", "x")
	r := freePorts(t, 2)
	port, _ := look.AssignPort(dir, "w", r)
	commitIn(t, wt.Path, "work")
	head := testkit.Git(t, dir, "rev-parse", "feature/x")
	os.WriteFile(filepath.Join(wt.Path, "scratch"), nil, 0o644)
	got, err := Remove(dir, "w", true, true)
	if err != nil {
		t.Fatal(err)
	}
	want := Removal{Path: wt.Path, Branch: "feature/x", BranchKept: "kept feature/x: 1 commit not in dev", Port: port}
	if got != want {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if tree.IsDir(wt.Path) || !hasBranch(t, dir, "feature/x") || testkit.Git(t, dir, "rev-parse", "feature/x") != head {
		t.Fatal("the worktree should be gone and feature/x kept at its commit")
	}
	if list, _ := look.List(dir); len(list) != 0 {
		t.Fatalf("registry still lists %+v", list)
	}
	if strings.Contains(testkit.Git(t, dir, "worktree", "list"), wt.Path) {
		t.Fatal("git still lists the worktree")
	}
	testkit.AnchorRegistry(t, dir)
}

// --delete-branch deletes a branch whose commits are all in dev, and never
// the agent/<id> base branch it was not on.
func TestRemoveDeleteBranchMerged(t *testing.T) {
	dir, wt := ensured(t, "w", "x")
	commitIn(t, wt.Path, "work")
	testkit.Git(t, dir, "branch", "-f", "dev", "feature/x") // merged
	got, err := Remove(dir, "w", false, true)
	if err != nil {
		t.Fatal(err)
	}
	if !got.BranchDeleted || got.BranchKept != "" || hasBranch(t, dir, "feature/x") {
		t.Fatalf("%+v: feature/x should be deleted", got)
	}
	if !hasBranch(t, dir, "agent/w") {
		t.Fatal("the agent/w base branch went too")
	}
	// Without --delete-branch the branch stays.
	dir, wt = ensured(t, "v", "y")
	if got, err := Remove(dir, "v", false, false); err != nil || got.BranchDeleted || !hasBranch(t, dir, "feature/y") || tree.IsDir(wt.Path) {
		t.Fatalf("%+v %v", got, err)
	}
}

// Only feature/, feat/ and agent/ branches are ever deleted.
func TestRemoveDeleteBranchOnlyAgentBranches(t *testing.T) {
	dir, _ := ensured(t, "w", "")
	reg, _ := tree.LoadRegistry(dir)
	e := reg.Agents["w"]
	e.Branch = "main"
	reg.Agents["w"] = e
	tree.SaveRegistry(dir, reg)
	got, err := Remove(dir, "w", false, true)
	if err != nil || got.BranchDeleted || !strings.Contains(got.BranchKept, "only feature/, feat/ and agent/") || !hasBranch(t, dir, "main") {
		t.Fatalf("%+v %v", got, err)
	}
}

// A port freed by remove is the next agent's.
func TestRemoveFreesPort(t *testing.T) {
	dir, _ := ensured(t, "w", "x")
	r := freePorts(t, 1)
	port, err := look.AssignPort(dir, "w", r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := look.AssignPort(dir, "other", r); err == nil {
		t.Fatal("a one-port range gave its port twice")
	}
	got, err := Remove(dir, "w", false, false)
	if err != nil || got.Port != port {
		t.Fatalf("%+v %v", got, err)
	}
	if _, ok := look.PortOf(dir, "w"); ok {
		t.Fatal("w kept its port")
	}
	if p, err := look.AssignPort(dir, "other", r); err != nil || p != port {
		t.Fatalf("other got %d %v, want %d", p, err, port)
	}
	// A worker with a port and no worktree: remove frees the port alone.
	got, err = Remove(dir, "other", false, false)
	if err != nil || got.Port != port || got.Path != "" {
		t.Fatalf("port only: %+v %v", got, err)
	}
	if _, err := Remove(dir, "other", false, false); !errors.Is(err, ErrNothingToRemove) || !strings.Contains(err.Error(), `"other"`) {
		t.Fatalf("twice: %v", err)
	}
}

// A detached HEAD whose commits are on no branch is kept even with --force:
// removing the worktree would drop the only thing that holds them.
func TestRemoveKeepsOrphanCommits(t *testing.T) {
	dir, wt := ensured(t, "w", "x")
	testkit.Git(t, wt.Path, "checkout", "-q", "--detach")
	commitIn(t, wt.Path, "orphan")
	_, err := Remove(dir, "w", true, true)
	refused(t, dir, wt, err, "HEAD is detached with 1 commit on no branch; not removing it, even with --force")
}

// A folder deleted by hand leaves a stale git worktree: remove prunes it
// and drops the entry. A folder git does not know is never removed.
func TestRemoveMissingAndStrayFolders(t *testing.T) {
	dir, wt := ensured(t, "w", "x")
	os.RemoveAll(wt.Path)
	if got, err := Remove(dir, "w", false, false); err != nil || got.Path != "" || got.Branch != "feature/x" {
		t.Fatalf("%+v %v", got, err)
	}
	if strings.Contains(testkit.Git(t, dir, "worktree", "list"), wt.Path) {
		t.Fatal("git still lists the worktree")
	}
	stray := filepath.Join(dir, "var", "worktrees", "stray")
	os.MkdirAll(stray, 0o755)
	os.WriteFile(filepath.Join(stray, "keep"), nil, 0o644)
	if _, err := Remove(dir, "stray", true, false); err == nil || !strings.Contains(err.Error(), "not a registered git worktree") {
		t.Fatalf("stray folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(stray, "keep")); err != nil {
		t.Fatal("the stray folder's file is gone")
	}
}

func TestLookup(t *testing.T) {
	dir, wt := ensured(t, "w 1", "x")
	got, ok, err := look.Lookup(dir, "w 1")
	if err != nil || !ok || got.Path != wt.Path {
		t.Fatalf("%+v %v %v", got, ok, err)
	}
	if _, ok, err := look.Lookup(dir, "nobody"); ok || err != nil {
		t.Fatalf("nobody: %v %v", ok, err)
	}
	// Without the registry, the default path git knows still answers.
	os.Remove(filepath.Join(dir, tree.RegistryFile))
	if got, ok, _ := look.Lookup(dir, "w 1"); !ok || got.Path != wt.Path || got.Branch != "feature/x" {
		t.Fatalf("without registry: %+v %v", got, ok)
	}
}
