package workers

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"fleetwatch/planfs"
)

// Stop asks the worker st describes to stop: SIGTERM to its process group
// when its pid leads one (Spawn, cron and systemd all start work-once as a
// group leader), else to the pid alone. The executor runs in a group of
// its own: the driver's handler stops it, then releases the plan.
//
// A pid in a state file may have been reused by an unrelated process
// since, so Stop signals nothing unless st was written on this host, the
// worker has not exited, the process is alive, and its command line is a
// work-once call naming no other agent id. Every refusal is one line.
func Stop(st State) error {
	who := st.AgentID
	switch {
	case st.State != StateRunning:
		return fmt.Errorf("%s has already exited; nothing to stop", who)
	case st.PID <= 0:
		return fmt.Errorf("%s: its state file names no process", who)
	case st.Host == "":
		return fmt.Errorf("%s: its state file names no host, so its pid cannot be trusted; stop it where it runs", who)
	case st.Host != hostname():
		return fmt.Errorf("%s runs on %s, not here; stop it there", who, st.Host)
	case st.PID == os.Getpid():
		return fmt.Errorf("%s: pid %d is this program", who, st.PID)
	case !processAlive(st.PID):
		return fmt.Errorf("%s: process %d is gone (dead); nothing to stop", who, st.PID)
	}
	switch ok, agent := workOnceOf(st.PID); {
	case !ok:
		return fmt.Errorf("%s: process %d is not a work-once run (its pid was reused?); nothing signalled", who, st.PID)
	case agent != "" && agent != st.AgentID:
		return fmt.Errorf("%s: process %d is %s's work-once (its pid was reused); nothing signalled", who, st.PID, agent)
	}
	target := st.PID
	if pgid, err := syscall.Getpgid(st.PID); err == nil && pgid == st.PID {
		target = -st.PID
	}
	if err := syscall.Kill(target, syscall.SIGTERM); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("%s: process %d is gone; nothing to stop", who, st.PID)
		}
		return fmt.Errorf("%s: signal process %d: %v", who, st.PID, err)
	}
	return nil
}

// StopAs is Stop asked through t: a viewer's tree (t.ReadOnly) is refused
// with planfs.ErrReadOnly and nothing is signalled.
func StopAs(t *planfs.Tree, st State) error {
	if err := t.Writable(); err != nil {
		return fmt.Errorf("stop %s: %w", st.AgentID, err)
	}
	return Stop(st)
}

// workOnceOf reports whether pid's command line has a work-once argument,
// as every worker's has (fleetwatch's and anchor's alike), and the agent
// id it names, if any: a pid reused by another worker's work-once names
// another agent.
func workOnceOf(pid int) (ok bool, agent string) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false, ""
	}
	args := strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
	if !slices.Contains(args, "work-once") {
		return false, ""
	}
	for i, arg := range args {
		if arg == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-"), "=")
		if !strings.HasPrefix(arg, "-") || name != "agent-id" {
			continue
		}
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
		}
		return true, value
	}
	return true, ""
}

// Local reports whether st was written on this host, where its pid means
// something.
func (st State) Local() bool { return st.Host != "" && st.Host == hostname() }
