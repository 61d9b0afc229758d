package proc

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// roProject is a project with a plan tree, and a writable and a viewer's
// (read-only) tree on it.
func roProject(t *testing.T) (project string, op, ro *planfs.Tree) {
	t.Helper()
	project = testkit.Project(t)
	if _, err := planfs.Scaffold(project); err != nil {
		t.Fatal(err)
	}
	var err error
	if op, err = planfs.Open(project); err != nil {
		t.Fatal(err)
	}
	if ro, err = planfs.Open(project); err != nil {
		t.Fatal(err)
	}
	ro.ReadOnly = true
	return project, op, ro
}

// TestReadOnlyRefusesSpawnAndDetached: a viewer's spawn and a detached job
// (a peer review, a landing) asked through a viewer's tree start nothing
// and write nothing, not even a log line; the same calls through a
// writable tree start.
func TestReadOnlyRefusesSpawnAndDetached(t *testing.T) {
	t.Parallel()
	project, op, ro := roProject(t)
	configure(t, project, "mid-1", "sleep=30s\nstate=1\n")
	spec := SpawnSpec{Bin: testkit.FakeDriver(t), Project: project, Agent: "mid-1", Tier: "mid", ReadOnly: true}
	marker := filepath.Join(t.TempDir(), "ran")
	before := testkit.StateOf(t, project)
	if c, err := Start(spec); !errors.Is(err, planfs.ErrReadOnly) || c != nil {
		t.Errorf("Start of a read-only spec: %v, %v", c, err)
	}
	if pid, err := spawn(spec); !errors.Is(err, planfs.ErrReadOnly) || pid != 0 {
		t.Errorf("Spawn of a read-only spec: %d, %v", pid, err)
	}
	_, err := StartDetachedAs(ro, "/bin/sh", "land.log", "-c", "touch "+marker)
	if !errors.Is(err, planfs.ErrReadOnly) || !strings.HasPrefix(err.Error(), filepath.Join(look.LogDir, "land.log")+": ") {
		t.Errorf("StartDetachedAs through a read-only tree: %v", err)
	}
	before.Unchanged(t, project, "a viewer's spawn and detached job")
	if _, err := os.Stat(marker); err == nil {
		t.Error("a refused detached job ran")
	}
	log, err := StartDetachedAs(op, "/bin/sh", "land.log", "-c", "touch "+marker)
	if err != nil || log != filepath.Join(project, look.LogDir, "land.log") {
		t.Fatalf("StartDetachedAs through a writable tree: %q %v", log, err)
	}
	eventually(t, "the operator's detached job ran", func() bool { _, err := os.Stat(marker); return err == nil })
	spec.ReadOnly = false
	if c := start(t, spec); c.State.PID <= 0 {
		t.Fatalf("the operator's spawn: %+v", c.State)
	}
}

// TestReadOnlyStopAsSignalsNothing: a viewer's stop of a live worker is
// refused and the worker runs on; the operator's stops it.
func TestReadOnlyStopAsSignalsNothing(t *testing.T) {
	t.Parallel()
	project, op, ro := roProject(t)
	configure(t, project, "mid-2", "sleep=30s\nstate=1\n")
	c := start(t, SpawnSpec{Project: project, Agent: "mid-2", Tier: "mid"})
	var st look.State
	eventually(t, "the worker wrote its state", func() bool {
		states, _ := look.ReadStates(project)
		if len(states) == 1 {
			st = states[0]
		}
		return st.PID == c.State.PID && st.State == look.StateRunning
	})
	err := StopAs(ro, st)
	if !errors.Is(err, planfs.ErrReadOnly) || !strings.HasPrefix(err.Error(), "stop mid-2: ") {
		t.Fatalf("StopAs through a read-only tree: %v", err)
	}
	term := filepath.Join(project, ".fake", "mid-2.term")
	time.Sleep(200 * time.Millisecond) // a signal sent would have landed by now
	if readFile(term) != "" || syscall.Kill(st.PID, 0) != nil {
		t.Fatalf("a refused stop signalled the worker (term %q)", readFile(term))
	}
	if _, done := c.Exited(); done {
		t.Fatal("the worker exited after a refused stop")
	}
	if err := StopAs(op, st); err != nil {
		t.Fatalf("the operator's stop: %v", err)
	}
	eventually(t, "the worker got SIGTERM", func() bool { return readFile(term) == "SIGTERM" })
}
