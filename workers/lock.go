package workers

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/workers/look"
)

// lockPath is the file a driver for agentID holds locked while it runs.
func lockPath(project, agentID string) string {
	return strings.TrimSuffix(look.StatePath(project, agentID), ".json") + ".lock"
}

// driverRunning reports whether a driver for agentID holds its lock in
// project now.
func driverRunning(project, agentID string) bool {
	f, err := os.Open(lockPath(project, agentID))
	if err != nil {
		return false
	}
	defer f.Close()
	return errors.Is(unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB), unix.EWOULDBLOCK)
}

// runningWhat says which process runs agentID and on what, as its state
// file has it: " (pid 123, in-progress/x.md)", or "".
func runningWhat(project, agentID string) string {
	data, err := os.ReadFile(look.StatePath(project, agentID))
	if err != nil {
		return ""
	}
	var st look.State
	if json.Unmarshal(data, &st) != nil || st.PID <= 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d, %s)", st.PID, st.Plan)
}

// DriverRunning reports whether a driver for agentID runs in project now
// (it holds its agent lock): the coordinator's test of whether an agent is
// gone.
func DriverRunning(project, agentID string) bool { return driverRunning(project, agentID) }
