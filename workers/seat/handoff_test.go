package seat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// The branch is not taken from a worktree whose driver runs and still
// leases a plan on it (two slugs can share one branch); once the lease is
// no longer that agent's, it is. A person's checkout is never touched.
func TestHandOffRespectsARunningDriver(t *testing.T) {
	dir := testkit.Repo(t)
	if _, err := planfs.Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, ".plans", "features", "a b.md"), []byte("# a b\n"), 0o644)
	tree, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.Claim("features/a b.md", "A", 600); err != nil {
		t.Fatal(err)
	}
	if _, err := Ensure(dir, "A", "a b"); err != nil {
		t.Fatal(err)
	}
	// A's driver is running: it holds its lock.
	os.MkdirAll(filepath.Dir(proc.LockPath(dir, "A")), 0o755)
	f, err := os.OpenFile(proc.LockPath(dir, "A"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	// Plan a-b shares feature/a-b with A's live plan "a b".
	if _, err := Ensure(dir, "B", "a-b"); err == nil || !strings.Contains(err.Error(), "still works on it") {
		t.Fatalf("took a live agent's branch: %v", err)
	}
	if _, err := tree.Release("in-progress/a b.md", planfs.Actor{AgentID: "op", Force: true}); err != nil {
		t.Fatal(err)
	}
	wt, err := Ensure(dir, "B", "a-b")
	if err != nil || wt.Branch != "feature/a-b" || wt.HandOff == nil || wt.HandOff.FromAgent != "A" {
		t.Fatalf("after the release: %+v %v", wt, err)
	}
	// The project's own checkout (a person's) keeps its branch.
	testkit.Git(t, dir, "checkout", "-q", "-b", "feature/mine")
	if _, err := Ensure(dir, "B", "mine"); err == nil || !strings.Contains(err.Error(), "not an agent worktree") {
		t.Fatalf("a person's checkout: %v", err)
	}
}
