package look

import (
	"os"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
)

// TestRunningCountsLiveAndStaleOnly: what the CLI tells after the UI
// closes counts the workers whose processes go on, not the dead or exited.
func TestRunningCountsLiveAndStaleOnly(t *testing.T) {
	t.Parallel()
	project := testkit.Project(t)
	if live, stale := Running(project, time.Now()); live != 0 || stale != 0 {
		t.Fatalf("no state files: %d live, %d stale", live, stale)
	}
	host, _ := os.Hostname()
	now := time.Now()
	at := func(ago time.Duration) Stamp { return Stamp{Time: now.Add(-ago)} }
	one := 1
	for _, st := range []State{
		{AgentID: "live-1", PID: os.Getpid(), Host: host, State: StateRunning, Started: at(time.Minute), LastHeartbeat: at(time.Second), HeartbeatEvery: 30},
		{AgentID: "live-2", PID: os.Getpid(), Host: host, State: StateRunning, Started: at(time.Minute), LastHeartbeat: at(time.Second), HeartbeatEvery: 30},
		{AgentID: "stale-1", PID: os.Getpid(), Host: host, State: StateRunning, Started: at(time.Hour), LastHeartbeat: at(time.Hour), HeartbeatEvery: 30},
		{AgentID: "dead-1", PID: testkit.DeadPID(t), Host: host, State: StateRunning, Started: at(time.Minute), LastHeartbeat: at(time.Second), HeartbeatEvery: 30},
		{AgentID: "done-1", PID: os.Getpid(), Host: host, State: StateExited, ExitCode: &one, Started: at(time.Minute)},
	} {
		if err := WriteState(project, st); err != nil {
			t.Fatal(err)
		}
	}
	if live, stale := Running(project, now); live != 2 || stale != 1 {
		t.Errorf("Running = %d live, %d stale; want 2 and 1", live, stale)
	}
}
