package workers

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/seat"
)

// overlapRig is a repository with worktrees for agents a, b and c, each on
// its own feature branch from dev.
func overlapRig(t *testing.T) (dir string, wts map[string]string) {
	t.Helper()
	dir = testkit.Repo(t)
	os.WriteFile(filepath.Join(dir, "shared.go"), []byte("package x\n\nfunc A() {}\n"), 0o644)
	testkit.Git(t, dir, "add", "shared.go")
	testkit.Git(t, dir, "commit", "-q", "-m", "shared")
	wts = map[string]string{}
	for _, id := range []string{"a", "b", "c"} {
		wt, err := seat.Ensure(dir, id, "plan-"+id)
		if err != nil {
			t.Fatal(err)
		}
		wts[id] = wt.Path
	}
	return dir, wts
}

func runningState(id, wt string, touched ...string) look.State {
	return look.State{AgentID: id, State: look.StateRunning, Worktree: wt, Touched: touched}
}

// Two workers editing the same file differently conflict; git is asked
// about the worktrees as they stand (one change committed, one not), and
// no ref, index or file of theirs changes.
func TestOverlapsConflict(t *testing.T) {
	dir, wts := overlapRig(t)
	os.WriteFile(filepath.Join(wts["a"], "shared.go"), []byte("package x\n\nfunc A() { println(1) }\n"), 0o644)
	testkit.Git(t, wts["a"], "commit", "-q", "-am", "a's change")
	os.WriteFile(filepath.Join(wts["b"], "shared.go"), []byte("package x\n\nfunc A() { println(2) }\n"), 0o644)
	os.WriteFile(filepath.Join(wts["b"], "b.go"), []byte("package x\n"), 0o644)
	os.WriteFile(filepath.Join(wts["c"], "c.go"), []byte("package x\n"), 0o644)

	refs := testkit.Git(t, dir, "for-each-ref")
	statusB := testkit.Git(t, wts["b"], "status", "--porcelain")
	got := look.Overlaps(dir, []look.State{
		runningState("b", wts["b"], "b.go", "shared.go"),
		runningState("a", wts["a"], "shared.go"),
		runningState("c", wts["c"], "c.go"),
		{AgentID: "d", State: look.StateExited, Worktree: wts["c"], Touched: []string{"shared.go"}},
	})
	if len(got) != 1 {
		t.Fatalf("overlaps %+v", got)
	}
	o := got[0]
	if o.A != "a" || o.B != "b" || !slices.Equal(o.Paths, []string{"shared.go"}) || !o.Checked || !o.Conflict ||
		!slices.Equal(o.Conflicts, []string{"shared.go"}) || o.Note != "" {
		t.Errorf("overlap %+v", o)
	}
	if after := testkit.Git(t, dir, "for-each-ref"); after != refs {
		t.Errorf("refs changed:\n%s\nwas:\n%s", after, refs)
	}
	if after := testkit.Git(t, wts["b"], "status", "--porcelain"); after != statusB {
		t.Errorf("b's status changed: %q, was %q", after, statusB)
	}
}

// The same line added the same way by both merges cleanly: an overlap, but
// no conflict. A worktree that is gone is a note, not a failure.
func TestOverlapsSameEditAndMissingWorktree(t *testing.T) {
	dir, wts := overlapRig(t)
	for _, id := range []string{"a", "b"} {
		os.WriteFile(filepath.Join(wts[id], "shared.go"), []byte("package x\n\nfunc A() {}\n\nfunc B() {}\n"), 0o644)
	}
	got := look.Overlaps(dir, []look.State{runningState("a", wts["a"], "shared.go"), runningState("b", wts["b"], "shared.go"),
		runningState("z", filepath.Join(dir, "var", "worktrees", "gone"), "shared.go")})
	if len(got) != 3 {
		t.Fatalf("overlaps %+v", got)
	}
	if o := got[0]; o.A != "a" || o.B != "b" || !o.Checked || o.Conflict || len(o.Conflicts) != 0 {
		t.Errorf("same edit: %+v", o)
	}
	for _, o := range got[1:] {
		if o.B != "z" || o.Checked || o.Note == "" {
			t.Errorf("gone worktree: %+v", o)
		}
	}
}
