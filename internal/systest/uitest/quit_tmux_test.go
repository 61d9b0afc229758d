package uitest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// TestTmuxQuitSaysWorkersKeepRunning: workers outlive the UI; quitting
// says how many go on (live and stale, not dead or exited), and says
// nothing when none do. The pane is kept after the program ends
// (remain-on-exit), so the line printed after the UI is there to read.
// The line fits 80 columns.
func TestTmuxQuitSaysWorkersKeepRunning(t *testing.T) {
	t.Parallel()
	needTmux(t)
	for _, withWorkers := range []bool{true, false} {
		name := "none"
		if withWorkers {
			name = "two running"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
			if withWorkers {
				writeWorkerStates(t, dir)
			}
			tt := startTmux(t, 100, 30, dir, nil)
			if out, err := tt.tmux("set-option", "-w", "-t", "fw", "remain-on-exit", "on"); err != nil {
				t.Fatalf("remain-on-exit: %v: %s", err, out)
			}
			tt.waitShows(tmuxStartWait, `\[1 Plans\]`)
			tt.keys("q")
			deadline := time.Now().Add(tmuxWait)
			for {
				if _, err := os.Stat(tt.status); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("fleetwatch did not exit after q:\n%s", tt.capture())
				}
				time.Sleep(20 * time.Millisecond)
			}
			// The pane's last output may reach tmux after the exit status
			// (a loaded machine): wait for it, then read it with the
			// history, since tmux's "Pane is dead" line scrolls the screen.
			const line = "2 workers keep running (they outlive the UI); fleetwatch shows them again"
			time.Sleep(100 * time.Millisecond)
			screen := tt.capture("-J", "-S", "-100")
			for withWorkers && !strings.Contains(screen, line) && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
				screen = tt.capture("-J", "-S", "-100")
			}
			if got := strings.Count(screen, "keep running"); withWorkers && (got != 1 || !strings.Contains(screen, line)) {
				t.Fatalf("want the line %q once after quitting:\n%s", line, screen)
			} else if !withWorkers && got != 0 {
				t.Fatalf("no worker runs, yet:\n%s", screen)
			}
		})
	}
}

// writeWorkerStates gives dir two running workers (a real process stands
// in for both), a dead one and one that exited.
func writeWorkerStates(t *testing.T, dir string) {
	t.Helper()
	sleeper := exec.Command("sleep", "300")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	host, _ := os.Hostname()
	now := look.Stamp{Time: time.Now()}
	one := 1
	for _, st := range []look.State{
		{AgentID: "mid-1", PID: sleeper.Process.Pid, Host: host, State: look.StateRunning, Started: now, LastHeartbeat: now, HeartbeatEvery: 600},
		{AgentID: "mid-2", PID: sleeper.Process.Pid, Host: host, State: look.StateRunning, Started: now, LastHeartbeat: now, HeartbeatEvery: 600},
		{AgentID: "gone-1", PID: testkit.DeadPID(t), Host: host, State: look.StateRunning, Started: now, LastHeartbeat: now, HeartbeatEvery: 600},
		{AgentID: "done-1", PID: sleeper.Process.Pid, Host: host, State: look.StateExited, ExitCode: &one, Started: now},
	} {
		if err := look.WriteState(dir, st); err != nil {
			t.Fatal(err)
		}
	}
}
