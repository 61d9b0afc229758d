package workers

import (
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
	w, err := proc.StartSupervisor(d.Supervisor, d.Tree.Project, d.Worker.AgentID, d.Grace)
	if err != nil {
		d.Log.Printf("no supervisor for the agent's run: %v", tree.ErrText(err))
		return
	}
	d.watchdog = w
}

// stopSupervisor lets the supervisor go: the run is over and recorded so.
func (d *Driver) stopSupervisor() {
	if d.watchdog != nil {
		d.watchdog.Close()
		d.watchdog = nil
	}
}
