package uictx

import (
	"slices"
	"time"

	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// Workers is the workers as the root last judged them, which the Workers
// pane shows: the rows, the radar's last look, the state files that
// could not be read, and why the last read of the other machines' workers
// failed ("" when it did not; the rows are then the last read's).
type Workers struct {
	Rows     []WorkerRow
	Overlaps []look.Overlap
	Problems []string
	PubErr   string
}

// WorkerRow is a line of the Workers pane: a state file as judged when it
// was read, or a worker this UI started that has written none yet.
type WorkerRow struct {
	St     look.State
	Health look.Health
	Local  bool // written on this host: its pid can be checked and signalled
	Child  bool // started here, no state file of its own yet
	// Pub is the record another machine published, for a worker shown
	// from the claims backend; SeenAt is when this machine first saw it
	// as it is (its heartbeat age, on this machine's clock).
	Pub    *look.Published
	SeenAt time.Time
}

// Key is the row's identity in the table: its agent id, and its host for
// another machine's worker (an agent id may run on two machines).
func (r *WorkerRow) Key() string {
	if r.Pub != nil {
		return r.St.AgentID + " on " + r.St.Host
	}
	return r.St.AgentID
}

// JudgeWorkers judges each worker at now; the workers this UI started that
// no state file shows yet are added. It reads no file, so the clock can
// move the rows on (a heartbeat growing stale, a process dying) without
// reading the state files again.
func JudgeWorkers(states []look.State, children []*proc.Child, now time.Time) []WorkerRow {
	rows := make([]WorkerRow, 0, len(states)+len(children))
	bySafe := map[string]int{}
	for _, st := range states {
		bySafe[tree.SafeID(st.AgentID)] = len(rows)
		rows = append(rows, WorkerRow{St: st, Health: st.Health(now), Local: st.Local()})
	}
	for _, c := range children {
		st := c.State
		health := look.Live
		st.Note = "started here; no state file yet"
		if code, done := c.Exited(); done {
			st.State, st.ExitCode, health = look.StateExited, &code, look.Exited
			st.Note = "started here; wrote no state file"
		}
		row := WorkerRow{St: st, Health: health, Local: true, Child: true}
		i, ok := bySafe[tree.SafeID(st.AgentID)]
		switch {
		case !ok:
			bySafe[tree.SafeID(st.AgentID)] = len(rows)
			rows = append(rows, row)
		case rows[i].St.PID != st.PID && rows[i].St.Started.Before(st.Started.Time):
			// The state file is an earlier run's: this one is newer.
			rows[i] = row
		}
	}
	slices.SortStableFunc(rows, byStart)
	return rows
}

// byStart orders workers by when their run started, then by agent id: a
// key that never changes while a run lasts, so a worker that exits, goes
// stale or dies stays where it is under the operator's cursor, and a new
// one joins at the end.
func byStart(a, b WorkerRow) int {
	if c := a.St.Started.Compare(b.St.Started.Time); c != 0 {
		return c
	}
	return kit.NatCompare(a.St.AgentID, b.St.AgentID)
}
