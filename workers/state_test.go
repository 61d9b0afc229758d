package workers

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// A FIFO among the state files made ReadStates block in open(2) until
// someone wrote to it: the UI's Workers pane stopped refreshing for good
// (its one reading never came back), the spawn form never opened
// (UniqueAgentID reads the states) and `watch status` hung. A state file
// far larger than any real one (a few hundred bytes) was read and parsed
// in full on every refresh, a second a time while workers run.
func TestReadStatesSkipsFIFOsAndHugeFiles(t *testing.T) {
	t.Parallel()
	project := testkit.Project(t)
	dir := filepath.Join(project, filepath.FromSlash(look.StateDir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	huge := `{"agent_id":"huge","note":"` + strings.Repeat("x", 8<<20) + `"}`
	if err := os.WriteFile(filepath.Join(dir, "huge.json"), []byte(huge), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := look.WriteState(project, look.State{AgentID: "mid-1", PID: 1, State: look.StateRunning}); err != nil {
		t.Fatal(err)
	}
	var states []look.State
	var problems []string
	testkit.Within(t, "ReadStates with a FIFO among the state files", func() { states, problems = look.ReadStates(project) })
	if len(states) != 1 || states[0].AgentID != "mid-1" {
		t.Errorf("states %+v", states)
	}
	joined := strings.Join(problems, "\n")
	if len(problems) != 2 || !strings.Contains(joined, "pipe.json: not a regular file") || !strings.Contains(joined, "huge.json: ") {
		t.Errorf("problems %q", problems)
	}
	testkit.Within(t, "UniqueAgentID with a FIFO among the state files", func() { proc.UniqueAgentID(project, "ui-mid") })
}
