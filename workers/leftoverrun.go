package workers

// recordAgent notes the agent's group and its adopted daemons in the state
// file; nil clears them once the agent is gone.
func (d *Driver) recordAgent(r *running) {
	if r == nil {
		d.state.Agent, d.state.Adopted, d.state.Cgroup, d.state.Session = nil, nil, "", 0
		return
	}
	if d.state.Agent == nil {
		if p := procOf(r.pgid); p.PID != 0 {
			d.state.Agent = &p
			if st, ok := readStat(p.PID); ok && st.sid == p.PID {
				// A session of its own: its members are the run's
				// too, whatever group they moved to.
				d.state.Session = p.PID
			}
		}
		if g := r.box.Group; g != nil {
			d.state.Cgroup = g.Path
		}
	}
	for _, pid := range adoptedOrphans(r.pgid) {
		p := procOf(pid)
		if p.PID == 0 || containsProc(d.state.Adopted, p) {
			continue
		}
		d.state.Adopted = append(d.state.Adopted, p)
	}
}
