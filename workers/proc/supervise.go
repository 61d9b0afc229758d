package proc

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// A driver killed with kill -9 cannot stop its run, and the next driver
// or recover may be hours away: each driver that runs agents starts one
// supervisor, a small process of this program in a session of its own
// that holds the read end of a pipe only the driver writes to. When the
// driver ends, however it ends, the supervisor reads end of file; if the
// state file still records a run, the driver died in it: the supervisor
// sends the run's agent, group, session and adopted daemons SIGTERM, waits
// the stop grace, then, under the agent's lock (so it never touches the
// run of a driver that started since), kills all of it, its cgroup first,
// and brings its commits in. One per driver, not per agent start: it costs a run
// nothing.

// supervisorArgs are the arguments the supervisor command gets after the
// driver's Supervisor argv: the project, the agent id, the stop grace.
func supervisorArgs(project, agentID string, grace time.Duration) []string {
	return []string{"--project", project, "--agent-id", agentID, "--stop-grace", grace.String()}
}

// StartSupervisor starts the supervisor, argv (the fleetwatch binary and
// its leading arguments) and supervisorArgs, for agentID's run in project,
// in a session of its own so that the terminal's ^C or a kill of the
// caller's group does not end it, bound to the caller by a pipe: closing
// the returned write end (or the caller's death) lets it go.
func StartSupervisor(argv []string, project, agentID string, grace time.Duration) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	args := append(append([]string(nil), argv[1:]...), supervisorArgs(project, agentID, grace)...)
	cmd := exec.Command(argv[0], args...)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, err
	}
	pid := cmd.Process.Pid
	supervisors.Store(pid, true)
	go func() {
		cmd.Wait()
		supervisors.Delete(pid)
	}()
	return w, nil
}

// supervisors are this process's drivers' supervisors, by pid: children
// the reaper must never take for daemons an agent left.
var supervisors sync.Map

// isSupervisor reports whether pid is this driver's supervisor.
func isSupervisor(pid int) bool {
	_, ok := supervisors.Load(pid)
	return ok
}

// Supervise is the supervisor's whole life: it waits for end of file on
// driver, then, when agentID's state file says a run was live (its driver
// died in it), stops that run: SIGTERM first, SIGKILL to all of it once
// grace has passed or it is gone, then its commits brought in. It returns
// what it did, for nobody in particular: its output goes nowhere.
func Supervise(project, agentID string, grace time.Duration, driver io.Reader) error {
	_, _ = io.Copy(io.Discard, driver)
	st, ok, err := leftState(project, agentID)
	if !ok || st.State != look.StateRunning || (st.Agent == nil && st.Cgroup == "") {
		return err
	}
	// The pipe's end comes as the dying driver closes its files, the lock
	// among them, in no set order: it is wholly gone before the lock says
	// who runs.
	for limit := time.Now().Add(time.Second); ProcOf(st.PID).PID != 0 && time.Now().Before(limit); {
		time.Sleep(5 * time.Millisecond)
	}
	// SIGTERM reaches only what is known to be that run's by number and
	// start time: the cgroup's name is the agent id's, and a driver that
	// starts meanwhile reuses it. Its members get SIGKILL, under the lock.
	groups, sessions, procs := runOf(st)
	signalRun(groups, sessions, procs, syscall.SIGTERM)
	logTo(project, agentID, "driver pid %d is gone: its supervisor stops the run of %s (grace %v)", st.PID, st.Plan, grace)
	for deadline := time.Now().Add(grace); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !alive(groups, sessions, procs) && !groupPopulated(st.Cgroup) {
			break
		}
	}
	return killUnderLock(project, agentID)
}

// logTo adds a line to agentID's driver log, when it opens.
func logTo(project, agentID, format string, args ...any) {
	if log, err := look.OpenLog(project, agentID, nil); err == nil {
		log.Printf(format, args...)
		log.Close()
	}
}

// killUnderLock kills what is left of agentID's run and brings its commits
// in, under the agent's lock: no driver starts on agentID meanwhile, and
// none that started during the grace (it stopped the run itself) is hit.
func killUnderLock(project, agentID string) error {
	lock, err := tree.OpenIn(project, LockPath(project, agentID), os.O_RDWR)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil
		}
		return err
	}
	if _, err := KillLeftovers(project, agentID); err != nil {
		return err
	}
	bringLeftoverLogged(project, agentID)
	return nil
}

// groupPopulated reports whether fleetwatch's cgroup at path still holds
// a process.
func groupPopulated(path string) bool {
	if !strings.HasPrefix(filepath.Base(path), "fleetwatch-") {
		return false
	}
	data, err := look.ReadStateFile(filepath.Join(path, "cgroup.procs"))
	return err == nil && len(strings.Fields(string(data))) > 0
}
