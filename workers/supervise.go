package workers

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A driver killed with kill -9 cannot stop its run, and the next driver
// or recover may be hours away: each driver that runs agents starts one
// supervisor, a small process of this program in a session of its own
// that holds the read end of a pipe only the driver writes to. When the
// driver ends, however it ends, the supervisor reads end of file; if the
// state file still records a run, the driver died in it: the supervisor
// sends the run SIGTERM, waits the stop grace, then kills its cgroup,
// process group, session and adopted daemons and brings its commits in,
// all under the agent's lock, so it never touches a run of a driver that
// started since. One per driver, not per agent start: it costs a run
// nothing.

// supervisorArgs are the arguments the supervisor command gets after the
// driver's Supervisor argv: the project, the agent id, the stop grace.
func supervisorArgs(project, agentID string, grace time.Duration) []string {
	return []string{"--project", project, "--agent-id", agentID, "--stop-grace", grace.String()}
}

// supervisors are this process's drivers' supervisors, by pid: children
// the reaper must never take for daemons an agent left.
var supervisors sync.Map

// startSupervisor starts d.Supervisor, when set, bound to this driver by
// a pipe; d.watchdog is the pipe's write end, closed by Finish (or by the
// kernel when the driver dies).
func (d *Driver) startSupervisor() {
	if len(d.Supervisor) == 0 || d.Argv == nil {
		return
	}
	r, w, err := os.Pipe()
	if err != nil {
		d.Log.Printf("no supervisor for the agent's run: %v", err)
		return
	}
	defer r.Close()
	args := append(append([]string(nil), d.Supervisor[1:]...), supervisorArgs(d.Tree.Project, d.Worker.AgentID, d.Grace)...)
	cmd := exec.Command(d.Supervisor[0], args...)
	cmd.Stdin = r
	// Its own session: the terminal's ^C or a kill of the driver's group
	// does not end it with the driver.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		d.Log.Printf("no supervisor for the agent's run: %v", errText(err))
		return
	}
	pid := cmd.Process.Pid
	supervisors.Store(pid, true)
	d.watchdog = w
	go func() {
		cmd.Wait()
		supervisors.Delete(pid)
	}()
}

// stopSupervisor lets the supervisor go: the run is over and recorded so.
func (d *Driver) stopSupervisor() {
	if d.watchdog != nil {
		d.watchdog.Close()
		d.watchdog = nil
	}
}

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
	if !ok || st.State != StateRunning || (st.Agent == nil && st.Cgroup == "") {
		return err
	}
	if driverRunning(project, agentID) {
		return nil // a new driver stopped it as it started
	}
	groups, sessions, procs := runOf(st)
	signalRun(groups, sessions, procs, syscall.SIGTERM)
	signalGroup(st.Cgroup, syscall.SIGTERM)
	for deadline := time.Now().Add(grace); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !alive(groups, sessions, procs) && !groupPopulated(st.Cgroup) {
			break
		}
	}
	// The agent's lock: no driver starts on agentID meanwhile, and none
	// that started during the grace (it stopped the run itself) is hit.
	lock, err := openIn(project, lockPath(project, agentID), os.O_RDWR)
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
	if _, err := stopLeftovers(project, agentID); err != nil {
		return err
	}
	bringLeftoverLogged(project, agentID)
	return nil
}

// signalGroup sends sig to every process in fleetwatch's cgroup at path.
func signalGroup(path string, sig syscall.Signal) {
	if !strings.HasPrefix(filepath.Base(path), "fleetwatch-") {
		return // none, or not one of ours (sandbox.KillGroup refuses it too)
	}
	data, err := readStateFile(filepath.Join(path, "cgroup.procs"))
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
			_ = syscall.Kill(pid, sig)
		}
	}
}

// groupPopulated reports whether the cgroup at path still holds a process.
func groupPopulated(path string) bool {
	if path == "" {
		return false
	}
	data, err := readStateFile(filepath.Join(path, "cgroup.procs"))
	return err == nil && len(strings.Fields(string(data))) > 0
}
