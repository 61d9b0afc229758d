package workers

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"fleetwatch/internal/sandbox"
	"fleetwatch/model"
	"fleetwatch/planfs"
)

// No agent process outlives its lease. While the agent runs, the driver
// records in its state file the agent's process group and the daemons it
// adopted, each with its start time. A driver killed with kill -9 cannot
// stop them; whoever takes the plan or the agent id over next — the agent
// id's next driver, a recover — stops them first (StopLeftovers). A pid is
// signalled only when its start time still matches, so a reused pid is
// never hit; a group is signalled only while its leader is the recorded
// process or gone (a live member keeps the group's number from reuse).

// Proc is one process as the state file records it.
type Proc struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"` // clock ticks after boot, from /proc/PID/stat
}

// procOf is pid as it runs now; zero when it does not.
func procOf(pid int) Proc {
	st, ok := readStat(pid)
	if !ok || st.state == 'Z' {
		return Proc{}
	}
	return Proc{PID: pid, Start: st.start}
}

// same reports whether p is still the process it was.
func (p Proc) same() bool {
	if p.PID <= 0 {
		return false
	}
	now := procOf(p.PID)
	return now.PID != 0 && now.Start == p.Start
}

// recordAgent notes the agent's group and its adopted daemons in the state
// file; nil clears them once the agent is gone.
func (d *Driver) recordAgent(r *running) {
	if r == nil {
		d.state.Agent, d.state.Adopted, d.state.Cgroup = nil, nil, ""
		return
	}
	if d.state.Agent == nil {
		if p := procOf(r.pgid); p.PID != 0 {
			d.state.Agent = &p
		}
		if g := r.box.group; g != nil {
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

func containsProc(ps []Proc, p Proc) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// leftoverWait bounds how long StopLeftovers waits for what it killed to go.
const leftoverWait = 5 * time.Second

// StopLeftovers kills, on this host, what agentID's last driver left
// running when it died: its agent's process group and the daemons it had
// adopted. It does nothing while a driver for agentID runs (that driver
// owns its agent). It returns how many groups and processes it signalled,
// once they are gone or leftoverWait has passed.
func StopLeftovers(project, agentID string) (int, error) {
	if driverRunning(project, agentID) {
		return 0, nil
	}
	return stopLeftovers(project, agentID)
}

// Recover takes over rel's expired or unreadable lease as a, after
// stopping whatever its holder's dead driver left running on this host:
// the plan never changes hands while the last agent's processes still
// work on it.
func Recover(t *planfs.Tree, rel string, a planfs.Actor, ttl float64) (*model.Lease, error) {
	if l := t.ReadLease(rel); l != nil && l.AgentID != "" && l.AgentID != a.AgentID {
		if _, err := StopLeftovers(t.Project, l.AgentID); err != nil {
			return nil, fmt.Errorf("cannot stop what %s's driver left running: %v", l.AgentID, err)
		}
	}
	return t.Recover(rel, a, ttl)
}

// stopLeftovers is StopLeftovers for a caller that knows no driver runs
// for agentID (it holds the agent's lock itself).
func stopLeftovers(project, agentID string) (int, error) {
	data, err := os.ReadFile(StatePath(project, agentID))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil || st.Host != hostname() {
		return 0, nil // unreadable, or another machine's pids
	}
	n := 0
	if _, err := os.Stat(st.Cgroup); st.Cgroup != "" && err == nil {
		// Everything the agent forked is in it, however it left its group.
		if err := sandbox.RemoveGroup(st.Cgroup); err != nil {
			return 0, err
		}
		n++
	}
	var groups, procs []int
	if a := st.Agent; a != nil && a.PID > 1 {
		// Its group's number cannot have been reused while any member
		// lives; a leader with another start time means the group is gone.
		if a.same() || procOf(a.PID).PID == 0 {
			groups = append(groups, a.PID)
		}
	}
	for _, p := range st.Adopted {
		if p.PID > 1 && p.same() {
			procs = append(procs, p.PID)
		}
	}
	for _, g := range groups {
		if syscall.Kill(-g, syscall.SIGKILL) == nil {
			n++
		}
	}
	for _, pid := range procs {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	deadline := time.Now().Add(leftoverWait)
	for time.Now().Before(deadline) && alive(groups, procs) {
		time.Sleep(20 * time.Millisecond)
	}
	return n, nil
}

// alive reports whether any of groups (by number) or procs still runs; a
// zombie (waiting for a parent that is not us) does not count.
func alive(groups, procs []int) bool {
	for _, g := range groups {
		if syscall.Kill(-g, 0) == nil && groupRuns(g) {
			return true
		}
	}
	for _, pid := range procs {
		if procOf(pid).PID != 0 {
			return true
		}
	}
	return false
}

// groupRuns reports whether a process of group g is running (not a zombie).
func groupRuns(g int) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid := 0
		for _, c := range e.Name() {
			if c < '0' || c > '9' {
				pid = -1
				break
			}
			pid = pid*10 + int(c-'0')
		}
		if pid <= 0 {
			continue
		}
		if st, ok := readStat(pid); ok && st.pgid == g && st.state != 'Z' {
			return true
		}
	}
	return false
}
