package ui

import (
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/panes/workers"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// The workers as the root reads and judges them, for the Workers pane
// (ui/panes/workers, through uictx.Ctx.Workers), the header and the
// notices; the reading itself is the feed's (data.go).

// workerReading is the workers' reading, held by the root: the state
// files as last read, the workers this UI started, the radar's last look
// (the feed says when it looks), the workers other machines publish
// through the claims backend (as read at pubAt; pubErr why the last read
// failed), and the rows judged from them all.
type workerReading struct {
	states    []look.State
	problems  []string
	children  []*proc.Child
	overlaps  []look.Overlap
	published []look.Published
	pubAt     time.Time
	pubErr    string
	rows      []uictx.WorkerRow
	pane      uictx.Pane // the Workers pane, which Rebuild rebuilds
	// inbox is the Inbox pane, which Rebuild rebuilds too: it lists the
	// runs waiting for input.
	inbox uictx.Pane
}

// workersOf is m's Workers pane.
func workersOf(m *Model) *workers.Pane { return m.paneOf(workersPane).(*workers.Pane) }

// publishedDetail is the detail of a worker another machine publishes,
// read off the UI goroutine: read again from its own record through c,
// and its log fetched from its machine's fleetwatch serve.
func publishedDetail(c *claims.Opened, r uictx.PublishedReq) func() func(*uictx.Ctx) []string {
	return func() func(*uictx.Ctx) []string {
		p, seenAt := rereadPublished(c, r.P, r.SeenAt)
		lines, err := fetchServedLog(p)
		return func(pc *uictx.Ctx) []string { return workers.PublishedDetail(pc.Common, p, seenAt, lines, err) }
	}
}

// remoteStop is the dialog that asks a worker on another machine to stop
// through c, the claims backend.
func remoteStop(c *claims.Opened, r uictx.RemoteStopReq) *dialog {
	st := r.St
	r.Q.Do = func(model.Lane, string) tea.Cmd { return remoteStopCmd(c, st) }
	return &dialog{Question: r.Q}
}

// stateChangeMsg is one debounced burst of changes to the state files.
type stateChangeMsg look.StateChange

// workersCmd reads every state file, and with radar asks which running
// workers touch the same paths; uictx.JudgeWorkers turns them into rows.
func workersCmd(project string, radar bool) tea.Cmd {
	return func() tea.Msg { return readWorkers(project, radar) }
}

// judge is the rows at now: this machine's state files and the workers
// it started, then every other machine's published workers by host.
func (w *workerReading) judge(now time.Time) {
	w.rows = uictx.JudgeWorkers(w.states, w.children, now)
	for i := range w.published {
		p := &w.published[i]
		w.rows = append(w.rows, uictx.WorkerRow{St: p.State, Health: p.Health, Pub: p, SeenAt: w.pubAt.Add(-p.SeenFor)})
	}
}

// view is the reading as the Workers pane is given it.
func (w *workerReading) view() *uictx.Workers {
	return &uictx.Workers{Rows: w.rows, Overlaps: w.overlaps, Problems: w.problems, PubErr: w.pubErr}
}

// Rebuild rebuilds the Workers pane from the reading, and the Inbox
// pane's runs waiting for input.
func (w *workerReading) Rebuild(c *uictx.Ctx) {
	w.pane.Rebuild(c)
	if w.inbox != nil {
		w.inbox.Rebuild(c)
	}
}

// waitForStatesCmd waits for the state watcher's next change; like
// waitForChangeCmd, one is ever pending.
func waitForStatesCmd(ch <-chan look.StateChange) tea.Cmd {
	return func() tea.Msg {
		c, ok := <-ch
		if !ok {
			return nil
		}
		return stateChangeMsg(c)
	}
}

// workersRunning reports whether a worker may change state without
// writing its file: a heartbeat growing stale, a process dying.
func (m *Model) workersRunning() bool {
	for i := range m.wrk.rows {
		if h := m.wrk.rows[i].Health; h == look.Live || h == look.Stale {
			return true
		}
	}
	return false
}

func (m *Model) selectedWorker() *uictx.WorkerRow {
	if m.pane != workersPane {
		return nil
	}
	return workersOf(m).Row()
}

func (w *workerReading) byAgent(agent string) *uictx.WorkerRow {
	for i := range w.rows {
		if w.rows[i].St.AgentID == agent {
			return &w.rows[i]
		}
	}
	return nil
}

// workersShown reports whether the header counts workers: while any has
// not exited.
func (w *workerReading) shown() bool {
	for i := range w.rows {
		if w.rows[i].Health != look.Exited {
			return true
		}
	}
	return false
}

// workerCounts is the header's summary: workers not yet exited, and how
// many of them are stale or dead; alarm is that last part alone, "" when
// none is.
func (w *workerReading) counts() (summary, alarm string) {
	n, stale, dead := 0, 0, 0
	for i := range w.rows {
		switch w.rows[i].Health {
		case look.Exited:
			continue
		case look.Stale:
			stale++
		case look.Dead:
			dead++
		}
		n++
	}
	s := kit.Plural(n, "worker", "workers")
	var bad []string
	if stale > 0 {
		bad = append(bad, kit.Itoa(stale)+" stale")
	}
	if dead > 0 {
		bad = append(bad, kit.Itoa(dead)+" dead")
	}
	if len(bad) > 0 {
		alarm = strings.Join(bad, ", ")
		s += " (" + alarm + ")"
	}
	return s, alarm
}

// PlanSlug is the slug of the plan a state file names (a rel or a path).
// running are the live runs this cockpit follows, with what each has spent
// so far, which the Fleet pane lists.
func running(rows []uictx.WorkerRow) []look.State {
	var out []look.State
	for i := range rows {
		r := &rows[i]
		if r.Health != look.Live || r.Child || r.St.Agent == nil && r.St.Spent == (ledger.Totals{}) {
			continue
		}
		out = append(out, r.St)
	}
	return out
}
