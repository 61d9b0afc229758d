package runtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// TestWorkOnceEnsureWorktree claims with --ensure-worktree in a real git
// repository: the plan's path, then anchor's WORKTREE=/BRANCH=/INTEGRATION=
// lines, with the checkout on the plan's feature branch.
func TestWorkOnceEnsureWorktree(t *testing.T) {
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/fix-login.md"})
	testkit.Git(t, dir, "init", "-q")
	testkit.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "init")

	r := fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "mid 1", "--ensure-worktree")
	if r.Code != 0 {
		t.Fatalf("%v", r)
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	wantPath := filepath.Join(dir, "var", "worktrees", "mid-1")
	want := []string{filepath.Join(dir, ".plans", "in-progress", "fix-login.md"), "WORKTREE=" + wantPath, "BRANCH=feature/fix-login", "INTEGRATION=dev"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stdout:\n%s\nwant:\n%s", r.Stdout, strings.Join(want, "\n"))
	}
	if _, err := os.Stat(filepath.Join(wantPath, ".git")); err != nil {
		t.Fatalf("no checkout at %s: %v", wantPath, err)
	}
}

// Outside git the claim stands and the worktree failure is exit 2.
func TestWorkOnceEnsureWorktreeOutsideGit(t *testing.T) {
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/x.md"})
	r := fwtest.Run(t, dir, "work-once", "--once", "--ensure-worktree")
	if r.Code != 2 || !strings.Contains(r.Stderr, "not a git repository") || strings.Count(r.Stderr, "\n") != 1 {
		t.Fatalf("%v", r)
	}
	if !fwtest.Exists(dir, "in-progress/x.md") {
		t.Fatal("the plan should stay claimed")
	}
}
