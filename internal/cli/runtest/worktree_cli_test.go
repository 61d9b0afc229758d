package runtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkOnceEnsureWorktree claims with --ensure-worktree in a real git
// repository: the plan's path, then anchor's WORKTREE=/BRANCH=/INTEGRATION=
// lines, with the checkout on the plan's feature branch.
func TestWorkOnceEnsureWorktree(t *testing.T) {
	dir := newTree(t, plan{rel: "features/fix-login.md"})
	git(t, dir, "init", "-q")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "init")

	r := fw(t, dir, "work-once", "--once", "--agent-id", "mid 1", "--ensure-worktree")
	if r.code != 0 {
		t.Fatalf("%v", r)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	wantPath := filepath.Join(dir, "var", "worktrees", "mid-1")
	want := []string{filepath.Join(dir, ".plans", "in-progress", "fix-login.md"), "WORKTREE=" + wantPath, "BRANCH=feature/fix-login", "INTEGRATION=dev"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stdout:\n%s\nwant:\n%s", r.stdout, strings.Join(want, "\n"))
	}
	if _, err := os.Stat(filepath.Join(wantPath, ".git")); err != nil {
		t.Fatalf("no checkout at %s: %v", wantPath, err)
	}
}

// Outside git the claim stands and the worktree failure is exit 2.
func TestWorkOnceEnsureWorktreeOutsideGit(t *testing.T) {
	dir := newTree(t, plan{rel: "features/x.md"})
	r := fw(t, dir, "work-once", "--once", "--ensure-worktree")
	if r.code != 2 || !strings.Contains(r.stderr, "not a git repository") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("%v", r)
	}
	if !exists(dir, "in-progress/x.md") {
		t.Fatal("the plan should stay claimed")
	}
}
