package proc

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/workers/look"
)

// LockPath is the file a driver for agentID holds locked while it runs.
func LockPath(project, agentID string) string {
	return strings.TrimSuffix(look.StatePath(project, agentID), ".json") + ".lock"
}

// DriverRunning reports whether a driver for agentID holds its lock in
// project now: the coordinator's test of whether an agent is gone.
func DriverRunning(project, agentID string) bool {
	f, err := os.Open(LockPath(project, agentID))
	if err != nil {
		return false
	}
	defer f.Close()
	return errors.Is(unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB), unix.EWOULDBLOCK)
}

// RunningWhat says which process runs agentID and on what, as its state
// file has it: " (pid 123, in-progress/x.md)", or "".
func RunningWhat(project, agentID string) string {
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
