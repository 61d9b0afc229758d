package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// Stop asks the worker st describes to stop: SIGTERM to its process group
// when its pid leads one (spawn, cron and systemd all start work-once as a
// group leader), else to the pid alone. The executor runs in a group of
// its own: the driver's handler stops it, then releases the plan.
//
// A pid in a state file may have been reused by an unrelated process
// since, so Stop signals nothing unless st was written on this host, the
// worker has not exited, the process is alive, and its command line is a
// work-once call naming no other agent id. Every refusal is one line.
func Stop(st look.State) error {
	if err := signalable(st, "stop"); err != nil {
		return err
	}
	who := st.AgentID
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

// signalable refuses to signal st's pid unless it is surely st's driver:
// written on this host, running, alive, and a work-once call naming no
// other agent id.
func signalable(st look.State, verb string) error {
	who := st.AgentID
	switch {
	case st.State != look.StateRunning:
		return fmt.Errorf("%s has already exited; nothing to %s", who, verb)
	case st.PID <= 0:
		return fmt.Errorf("%s: its state file names no process", who)
	case st.Host == "":
		return fmt.Errorf("%s: its state file names no host, so its pid cannot be trusted; %s it where it runs", who, verb)
	case st.Host != look.Hostname():
		return fmt.Errorf("%s runs on %s, not here; %s it there", who, st.Host, verb)
	case st.PID == os.Getpid():
		return fmt.Errorf("%s: pid %d is this program", who, st.PID)
	case !look.ProcessAlive(st.PID):
		return fmt.Errorf("%s: process %d is gone (dead); nothing to %s", who, st.PID, verb)
	}
	switch ok, agent := workOnceOf(st.PID); {
	case !ok:
		return fmt.Errorf("%s: process %d is not a work-once run (its pid was reused?); nothing signalled", who, st.PID)
	case agent != "" && agent != st.AgentID:
		return fmt.Errorf("%s: process %d is %s's work-once (its pid was reused); nothing signalled", who, st.PID, agent)
	}
	return nil
}

// Pause asks st's driver to pause its running agent where it is (on) or
// to let it go on (off): SIGUSR1 or SIGUSR2 to the driver alone, which
// stops or continues the agent's process group and holds or opens its
// metering proxy. Only a driver that says it can (State.Pausable) is
// signalled: to any other program those signals are fatal.
func Pause(st look.State, on bool) error {
	verb, sig := "pause", syscall.SIGUSR1
	if !on {
		verb, sig = "resume", syscall.SIGUSR2
	}
	if err := signalable(st, verb); err != nil {
		return err
	}
	switch {
	case !st.Pausable:
		return fmt.Errorf("%s: its driver cannot %s a run (an older fleetwatch, or anchor's); nothing signalled", st.AgentID, verb)
	case on && st.Paused != "":
		return fmt.Errorf("%s is already paused: %s", st.AgentID, st.Paused)
	case !on && st.Paused == "":
		return fmt.Errorf("%s is not paused", st.AgentID)
	case on && st.Agent == nil:
		return fmt.Errorf("%s runs no agent now (%s); nothing to pause", st.AgentID, st.Note)
	}
	if err := syscall.Kill(st.PID, sig); err != nil {
		return fmt.Errorf("%s: signal process %d: %v", st.AgentID, st.PID, err)
	}
	return nil
}

// StopAs is Stop asked through t: a viewer's tree (t.ReadOnly) is refused
// with planfs.ErrReadOnly and nothing is signalled.
func StopAs(t *planfs.Tree, st look.State) error {
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

// StopRemote asks the worker st (on another host) to stop through f: its
// driver sees the request at its next heartbeat, stops its agent and
// hands its plan back. by names who asks.
func StopRemote(ctx context.Context, f claims.Fleet, st look.State, by string) error {
	if st.Host == "" || st.Host == look.Hostname() {
		return fmt.Errorf("%s runs here; stop it by its pid", st.AgentID)
	}
	err := f.RequestStop(ctx, st.Host, st.AgentID, claims.StopRequest{By: by, Host: look.Hostname(), At: look.UnixSeconds(time.Now())})
	switch {
	case errors.Is(err, claims.ErrWorkerDone):
		return fmt.Errorf("%s on %s has already exited; nothing to stop", st.AgentID, st.Host)
	case errors.Is(err, claims.ErrNoWorker):
		return fmt.Errorf("%s on %s publishes no record; nothing to stop", st.AgentID, st.Host)
	}
	return err
}
