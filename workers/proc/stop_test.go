package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// TestStopSignalsTheWorkersGroup stops a real detached worker: its driver
// and the executor it started (same process group) both get SIGTERM.
func TestStopSignalsTheWorkersGroup(t *testing.T) {
	t.Parallel()
	project := testkit.Project(t)
	configure(t, project, "mid-7", "sleep=30s\nstate=1\ngrandchild=1\n")
	c := start(t, SpawnSpec{Project: project, Agent: "mid-7", Tier: "mid", Run: true})
	var st look.State
	eventually(t, "the worker wrote its state and started its executor", func() bool {
		states, _ := look.ReadStates(project)
		if len(states) != 1 {
			return false
		}
		st = states[0]
		return readFile(filepath.Join(project, ".fake", "mid-7.grandchild-term.ready")) != ""
	})
	if st.PID != c.State.PID || st.Health(time.Now()) != look.Live {
		t.Fatalf("state %+v", st)
	}
	if err := Stop(st); err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(project, ".fake")
	eventually(t, "the driver and its executor got SIGTERM", func() bool {
		return readFile(filepath.Join(fake, "mid-7.term")) == "SIGTERM" && readFile(filepath.Join(fake, "mid-7.grandchild-term")) == "SIGTERM"
	})
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not exit after SIGTERM")
	}
	states, _ := look.ReadStates(project)
	if len(states) != 1 || states[0].State != look.StateExited || states[0].Note != "stopped by SIGTERM" {
		t.Errorf("states after stop: %+v", states)
	}
	// Exited now: a second stop refuses.
	if err := Stop(states[0]); err == nil || !strings.Contains(err.Error(), "mid-7 has already exited") {
		t.Errorf("stop of an exited worker: %v", err)
	}
}

func TestStopRefusesWhatItCannotTrust(t *testing.T) {
	t.Parallel()
	// A live process that is no work-once: a pid reused since the state
	// file was written.
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	here := look.Hostname()
	base := look.State{AgentID: "mid-1", State: look.StateRunning, Host: here, PID: other.Process.Pid}
	code := 0
	for _, c := range []struct {
		edit func(*look.State)
		want string
	}{
		{func(s *look.State) {}, "mid-1: process " + strconv.Itoa(other.Process.Pid) + " is not a work-once run (its pid was reused?); nothing signalled"},
		{func(s *look.State) { s.Host = "build-7" }, "mid-1 runs on build-7, not here; stop it there"},
		{func(s *look.State) { s.Host = "" }, "names no host"},
		{func(s *look.State) { s.PID = testkit.DeadPID(t) }, "is gone (dead); nothing to stop"},
		{func(s *look.State) { s.PID = 0 }, "names no process"},
		{func(s *look.State) { s.PID = os.Getpid() }, "is this program"},
		{func(s *look.State) { s.State, s.ExitCode = look.StateExited, &code }, "has already exited"},
	} {
		st := base
		c.edit(&st)
		err := Stop(st)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want one line with %q", st, err, c.want)
		}
	}
	// Nothing was signalled.
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the unrelated process is gone: %v", err)
	}
}

// Stop trusted any live process whose command line says work-once. After
// a reboot, or a kill -9 that left a state file saying running, the pid
// may belong to another worker's work-once by now: x on the dead worker
// sent SIGTERM to a live one, which released its plan. A process that
// started after the worker did cannot be it.
func TestStopRefusesAPidReusedByAnotherWorker(t *testing.T) {
	t.Parallel()
	project := testkit.Project(t)
	configure(t, project, "mid-2", "sleep=30s\nstate=1\n")
	c := start(t, SpawnSpec{Project: project, Agent: "mid-2", Tier: "mid"})
	eventually(t, "mid-2 wrote its state", func() bool {
		states, _ := look.ReadStates(project)
		return len(states) == 1
	})
	// mid-1's driver died an hour ago without a word; its pid is mid-2's now.
	gone := look.State{AgentID: "mid-1", PID: c.State.PID, Host: look.Hostname(), State: look.StateRunning,
		Started: look.Stamp{Time: time.Now().Add(-time.Hour)}, LastHeartbeat: look.Stamp{Time: time.Now().Add(-time.Hour)}, HeartbeatEvery: 30}
	err := Stop(gone)
	if err == nil || !strings.Contains(err.Error(), "pid was reused") || strings.Contains(err.Error(), "\n") {
		t.Errorf("stop of mid-1 whose pid is mid-2's now: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	if got := readFile(filepath.Join(project, ".fake", "mid-2.term")); got != "" {
		t.Errorf("mid-2 got %s meant for mid-1", got)
	}
	// mid-2's own state file still stops mid-2.
	states, _ := look.ReadStates(project)
	if err := Stop(states[0]); err != nil {
		t.Fatal(err)
	}
	eventually(t, "mid-2 got SIGTERM", func() bool { return readFile(filepath.Join(project, ".fake", "mid-2.term")) == "SIGTERM" })
}
