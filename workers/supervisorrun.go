package workers

import (
	"os"
	"os/exec"
	"syscall"

	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

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
	args := append(append([]string(nil), d.Supervisor[1:]...), proc.SupervisorArgs(d.Tree.Project, d.Worker.AgentID, d.Grace)...)
	cmd := exec.Command(d.Supervisor[0], args...)
	cmd.Stdin = r
	// Its own session: the terminal's ^C or a kill of the driver's group
	// does not end it with the driver.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		d.Log.Printf("no supervisor for the agent's run: %v", tree.ErrText(err))
		return
	}
	pid := cmd.Process.Pid
	proc.Supervisors.Store(pid, true)
	d.watchdog = w
	go func() {
		cmd.Wait()
		proc.Supervisors.Delete(pid)
	}()
}

// stopSupervisor lets the supervisor go: the run is over and recorded so.
func (d *Driver) stopSupervisor() {
	if d.watchdog != nil {
		d.watchdog.Close()
		d.watchdog = nil
	}
}
