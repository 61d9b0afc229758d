package workers

import "github.com/fleetwatch/fleetwatch/workers/proc"

// recordAgent notes the agent's group and its adopted daemons in the state
// file; nil clears them once the agent is gone.
func (d *Driver) recordAgent(r *running) {
	if r == nil {
		d.state.Agent, d.state.Adopted, d.state.Cgroup, d.state.Session = nil, nil, "", 0
		return
	}
	if d.state.Agent == nil {
		if p := proc.ProcOf(r.pgid); p.PID != 0 {
			d.state.Agent = &p
			if st, ok := proc.ReadStat(p.PID); ok && st.Sid == p.PID {
				// A session of its own: its members are the run's
				// too, whatever group they moved to.
				d.state.Session = p.PID
			}
		}
		if g := r.box.Group; g != nil {
			d.state.Cgroup = g.Path
		}
	}
	for _, pid := range proc.AdoptedOrphans(r.pgid) {
		p := proc.ProcOf(pid)
		if p.PID == 0 || proc.ContainsProc(d.state.Adopted, p) {
			continue
		}
		d.state.Adopted = append(d.state.Adopted, p)
	}
}
