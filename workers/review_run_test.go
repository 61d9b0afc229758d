package workers

import (
	"os"
	"strings"
	"testing"

	"fleetwatch/model"
	"fleetwatch/planfs"
)

// Review of the workers behind work-once --run.

// Two agent ids that become the same folder name ("a/b" and "a-b") must
// not be handed one checkout: each would work on, switch branches under and
// remove the other's worktree.
func TestReviewEnsureRefusesAnotherAgentsWorktree(t *testing.T) {
	dir, wt := ensured(t, "a/b", "x")
	if _, err := Ensure(dir, "a-b", "y"); err == nil || !strings.Contains(err.Error(), `"a/b"`) || !strings.Contains(err.Error(), `"a-b"`) {
		t.Fatalf("a second agent id got %s: %v", wt.Path, err)
	}
	if got := run(t, wt.Path, "rev-parse", "--abbrev-ref", "HEAD"); got != "feature/x" {
		t.Errorf("a/b's worktree was switched to %s", got)
	}
	if _, err := Remove(dir, "a-b", true, true); err == nil || !strings.Contains(err.Error(), `"a/b"`) {
		t.Errorf("removing a-b took a/b's worktree: %v", err)
	}
	if !isDir(wt.Path) {
		t.Fatal("a/b's worktree is gone")
	}
	if got, ok, err := Lookup(dir, "a-b"); ok || err != nil {
		t.Errorf("a-b's worktree path is a/b's: %+v %v", got, err)
	}
	// The agent itself still gets its own worktree back.
	if again, err := Ensure(dir, "a/b", "x"); err != nil || again.Path != wt.Path {
		t.Errorf("a/b again: %+v %v", again, err)
	}
}

// remove while the agent's driver works in the worktree would pull its
// checkout from under it and give its port to another agent.
func TestReviewRemoveRefusesWhileTheDriverRuns(t *testing.T) {
	dir, wt := ensured(t, "w", "x")
	port, err := AssignPort(dir, "w", freeRange(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	d := &Driver{Tree: &planfs.Tree{Project: dir}, Worker: model.Worker{AgentID: "w"}}
	if err := d.lockAgent(); err != nil {
		t.Fatal(err)
	}
	for _, force := range []bool{false, true} {
		_, err := Remove(dir, "w", force, true)
		if err == nil || !strings.Contains(err.Error(), "running") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("force %v: removed under a running driver: %v", force, err)
		}
		if !isDir(wt.Path) {
			t.Fatal("the worktree is gone")
		}
		if p, ok := PortOf(dir, "w"); !ok || p != port {
			t.Fatalf("the running agent's port was freed: %d %v", p, ok)
		}
	}
	// Once the driver has gone, remove works.
	d.lock.Close()
	if got, err := Remove(dir, "w", false, false); err != nil || got.Path != wt.Path || got.Port != port {
		t.Fatalf("after the driver: %+v %v", got, err)
	}
}

// Every line of a worker log starts with its time and stream, even when
// the driver names a plan whose file name holds a line break.
func TestReviewLogDriverLinesStayOneLine(t *testing.T) {
	dir := t.TempDir()
	l, err := OpenLog(dir, "w", nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Printf("claimed %s", "in-progress/x\ny\r.md")
	l.Close()
	data, err := os.ReadFile(l.Path)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"); len(lines) != 1 || !strings.HasSuffix(lines[0], ` fleet claimed in-progress/x\ny\r.md`) {
		t.Errorf("log:\n%q", data)
	}
}
