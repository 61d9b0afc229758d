package seat

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

func TestSafeID(t *testing.T) {
	for in, want := range map[string]string{
		"mid-1": "mid-1", "a/b c": "a-b-c", "!!!": "agent", "..x..": "x", "": "agent",
		strings.Repeat("a", 100): strings.Repeat("a", 80),
	} {
		if got := tree.SafeID(in); got != want {
			t.Errorf("SafeID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFeatureBranch(t *testing.T) {
	for in, want := range map[string]string{
		"fix-login": "feature/fix-login", "feature/x": "feature/x", "feat/y": "feat/y",
		"a b": "feature/a-b", "": "feature/work", "//": "feature/work",
	} {
		if got := tree.FeatureBranch(in); got != want {
			t.Errorf("FeatureBranch(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEnsureIntegration(t *testing.T) {
	dir := testkit.Repo(t)
	name, created, err := tree.EnsureIntegration(dir)
	if err != nil || name != "dev" || !created {
		t.Fatalf("first: %q %v %v", name, created, err)
	}
	name, created, err = tree.EnsureIntegration(dir)
	if err != nil || name != "dev" || created {
		t.Fatalf("second: %q %v %v", name, created, err)
	}
	// develop wins over creating dev when it is the only one.
	other := testkit.Repo(t)
	testkit.Git(t, other, "branch", "develop")
	if name, created, _ := tree.EnsureIntegration(other); name != "develop" || created {
		t.Fatalf("with develop: %q %v", name, created)
	}
	// No trunk at all is an error that names the project.
	bare := testkit.Repo(t)
	testkit.Git(t, bare, "branch", "-m", "main", "trunk")
	if _, _, err := tree.EnsureIntegration(bare); err == nil || !strings.Contains(err.Error(), bare) {
		t.Fatalf("without a trunk: %v", err)
	}
}

// fleetwatch.yaml's integration: names the branch, over dev and develop:
// made from the trunk when missing, origin's tracked when only it has it.
// A bad file is one line naming it and its line, and nothing is made.
func TestIntegrationFromSettings(t *testing.T) {
	dir := testkit.Repo(t)
	testkit.Git(t, dir, "branch", "dev")
	os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("integration: trunk\n"), 0o644)
	name, created, err := tree.EnsureIntegration(dir)
	if err != nil || name != "trunk" || !created {
		t.Fatalf("integration: trunk: %q %v %v", name, created, err)
	}
	wt, err := Ensure(dir, "mid-1", "fix-login")
	if err != nil || wt.Integration != "trunk" {
		t.Fatalf("ensure: %+v %v", wt, err)
	}
	if got, _ := look.FindIntegration(dir); got != "refs/heads/trunk" {
		t.Errorf("findIntegration: %q", got)
	}
	bad := testkit.Repo(t)
	os.WriteFile(filepath.Join(bad, "fleetwatch.yaml"), []byte("# settings\nintegration: a..b\n"), 0o644)
	_, err = Ensure(bad, "mid-1", "fix-login")
	if err == nil || !strings.Contains(err.Error(), filepath.Join(bad, "fleetwatch.yaml")+":2: integration: git refuses") {
		t.Fatalf("a bad fleetwatch.yaml: %v", err)
	}
	if _, err := os.Stat(filepath.Join(bad, "var", "worktrees", "mid-1")); err == nil {
		t.Error("a worktree was made despite the bad settings")
	}
}

func TestEnsureCreatesAndReuses(t *testing.T) {
	dir := testkit.Repo(t)
	wt, err := Ensure(dir, "mid-1", "fix-login")
	if err != nil {
		t.Fatal(err)
	}
	if wt.Branch != "feature/fix-login" || wt.Integration != "dev" || wt.Path != filepath.Join(dir, "var", "worktrees", "mid-1") {
		t.Fatalf("worktree %+v", wt)
	}
	if _, err := os.Stat(filepath.Join(wt.Path, "README")); err != nil {
		t.Fatalf("checkout has no README: %v", err)
	}
	if got := testkit.Git(t, wt.Path, "branch", "--show-current"); got != "feature/fix-login" {
		t.Fatalf("checked out %q", got)
	}
	again, err := Ensure(dir, "mid-1", "fix-login")
	if err != nil || again.Path != wt.Path {
		t.Fatalf("second ensure: %+v %v", again, err)
	}
	// var/ ignores itself; the project's tracked files are never edited.
	if _, err := os.Lstat(filepath.Join(dir, ".gitignore")); err == nil {
		t.Fatalf("ensure wrote the project's .gitignore")
	}
	if ignore, _ := os.ReadFile(filepath.Join(dir, "var", ".gitignore")); !strings.Contains(string(ignore), "\n*\n") {
		t.Fatalf("var/.gitignore %q", ignore)
	}
	if status := testkit.Git(t, dir, "status", "--porcelain"); status != "" {
		t.Fatalf("worktrees show in git status: %q", status)
	}
	var reg map[string]any
	data, _ := os.ReadFile(filepath.Join(dir, tree.RegistryFile))
	if err := json.Unmarshal(data, &reg); err != nil || reg["project"] != wt.Project {
		t.Fatalf("registry %s: %v", data, err)
	}
	list, err := look.List(dir)
	if err != nil || len(list) != 1 || list[0] != wt {
		t.Fatalf("List: %+v %v", list, err)
	}
}

func TestEnsureIsolatesAgents(t *testing.T) {
	dir := testkit.Repo(t)
	a, err := Ensure(dir, "agent-a", "plan-a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Ensure(dir, "agent-b", "plan-b")
	if err != nil {
		t.Fatal(err)
	}
	if a.Path == b.Path || a.Branch == b.Branch {
		t.Fatalf("shared: %+v %+v", a, b)
	}
	os.WriteFile(filepath.Join(a.Path, "only-a"), []byte("x"), 0o644)
	if _, err := os.Stat(filepath.Join(b.Path, "only-a")); err == nil {
		t.Fatal("a file written in one checkout shows in the other")
	}
}

// A later claim on another plan must not reset the feature branch of an
// earlier one: its commits stay.
func TestEnsureKeepsCommits(t *testing.T) {
	dir := testkit.Repo(t)
	wt, err := Ensure(dir, "w", "first")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(wt.Path, "work.txt"), []byte("done"), 0o644)
	testkit.Git(t, wt.Path, "add", "work.txt")
	testkit.Git(t, wt.Path, "commit", "-q", "-m", "work")
	head := testkit.Git(t, dir, "rev-parse", "feature/first")
	if _, err := Ensure(dir, "w", "second"); err != nil {
		t.Fatal(err)
	}
	if _, err := Ensure(dir, "w", "first"); err != nil {
		t.Fatal(err)
	}
	if got := testkit.Git(t, dir, "rev-parse", "feature/first"); got != head {
		t.Fatalf("feature/first moved from %s to %s", head, got)
	}
	if _, err := os.Stat(filepath.Join(wt.Path, "work.txt")); err != nil {
		t.Fatal("committed work gone from the checkout")
	}
}

func TestEnsureParallelAgents(t *testing.T) {
	dir := testkit.Repo(t)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() { _, errs[i] = Ensure(dir, "p-"+string(rune('a'+i)), "") })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("agent %d: %v", i, err)
		}
	}
	if list, _ := look.List(dir); len(list) != len(errs) {
		t.Fatalf("registry has %d agents, want %d", len(list), len(errs))
	}
}

func TestEnsureRefusesStrangers(t *testing.T) {
	if _, err := Ensure(t.TempDir(), "x", ""); !errors.Is(err, tree.ErrNotGit) {
		t.Fatalf("outside git: %v", err)
	}
	dir := testkit.Repo(t)
	os.MkdirAll(filepath.Join(dir, "var", "worktrees", "squatter"), 0o755)
	if _, err := Ensure(dir, "squatter", ""); err == nil || !strings.Contains(err.Error(), "not a registered git worktree") {
		t.Fatalf("over an unregistered folder: %v", err)
	}
}

// When agent/<id> is checked out elsewhere, the worktree gets a sibling branch.
func TestEnsureBaseBranchInUse(t *testing.T) {
	dir := testkit.Repo(t)
	tree.EnsureIntegration(dir)
	testkit.Git(t, dir, "branch", "agent/busy", "dev")
	testkit.Git(t, dir, "checkout", "-q", "agent/busy")
	wt, err := Ensure(dir, "busy", "")
	if err != nil || wt.Branch != "agent/busy-wt" {
		t.Fatalf("%+v %v", wt, err)
	}
}

// Two agent ids that become the same folder name ("a/b" and "a-b") must
// not be handed one checkout: each would work on, switch branches under and
// remove the other's worktree.
func TestEnsureRefusesAnotherAgentsWorktree(t *testing.T) {
	dir, wt := ensured(t, "a/b", "x")
	if _, err := Ensure(dir, "a-b", "y"); err == nil || !strings.Contains(err.Error(), `"a/b"`) || !strings.Contains(err.Error(), `"a-b"`) {
		t.Fatalf("a second agent id got %s: %v", wt.Path, err)
	}
	if got := testkit.Git(t, wt.Path, "rev-parse", "--abbrev-ref", "HEAD"); got != "feature/x" {
		t.Errorf("a/b's worktree was switched to %s", got)
	}
	if _, err := Remove(dir, "a-b", true, true); err == nil || !strings.Contains(err.Error(), `"a/b"`) {
		t.Errorf("removing a-b took a/b's worktree: %v", err)
	}
	if !tree.IsDir(wt.Path) {
		t.Fatal("a/b's worktree is gone")
	}
	if got, ok, err := look.Lookup(dir, "a-b"); ok || err != nil {
		t.Errorf("a-b's worktree path is a/b's: %+v %v", got, err)
	}
	// The agent itself still gets its own worktree back.
	if again, err := Ensure(dir, "a/b", "x"); err != nil || again.Path != wt.Path {
		t.Errorf("a/b again: %+v %v", again, err)
	}
}

// Project remembers a top level without asking git again, only while its
// .git is there: a repository removed, or a subdirectory that is not one,
// asks git again.
func TestProjectAsksAgainWithoutGit(t *testing.T) {
	dir, err := filepath.EvalSymlinks(testkit.Repo(t))
	if err != nil {
		t.Fatal(err)
	}
	if top, err := tree.Project(dir); err != nil || top != dir {
		t.Fatalf("Project(%s) = %q, %v", dir, top, err)
	}
	var top string
	if n := testkit.GitRuns(t, func() { top, err = tree.Project(dir) }); n != 0 || err != nil || top != dir {
		t.Fatalf("Project(%s) again = %q, %v after %d git runs, want none", dir, top, err, n)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if top, err := tree.Project(sub); err != nil || top != dir {
		t.Fatalf("Project(sub) = %q, %v", top, err)
	}
	if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, sub} {
		if top, err := tree.Project(d); !errors.Is(err, tree.ErrNotGit) {
			t.Errorf("Project(%s) without .git = %q, %v", d, top, err)
		}
	}
}
