package ui

import (
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"fleetwatch/internal/termtext"
	"fleetwatch/model"
	"fleetwatch/workers"
)

// workerRow is a line of the Workers pane: a state file as judged when it
// was read, or a worker this UI started that has written none yet.
type workerRow struct {
	st     workers.State
	health workers.Health
	local  bool // written on this host: its pid can be checked and signalled
	child  bool // started here, no state file of its own yet
}

// workersMsg is one reading of the state files; radar says the overlap
// radar looked too, and overlaps is what it saw.
type workersMsg struct {
	states   []workers.State
	problems []string
	radar    bool
	overlaps []workers.Overlap
}

// radarEvery is the least time between two looks of the overlap radar:
// each asks git merge-tree about every pair that touches the same path.
const radarEvery = 3 * time.Second

// stateChangeMsg is one debounced burst of changes to the state files.
type stateChangeMsg workers.StateChange

// workersCmd reads every state file, and with radar asks which running
// workers touch the same paths; judgeWorkers turns them into rows.
func workersCmd(project string, radar bool) tea.Cmd {
	return func() tea.Msg { return readWorkers(project, radar) }
}

// readWorkers is workersCmd's reading, shared with the hub.
func readWorkers(project string, radar bool) workersMsg {
	states, problems := workers.ReadStates(project)
	for i := range problems {
		problems[i] = strings.ReplaceAll(problems[i], project+string(filepath.Separator), "")
	}
	msg := workersMsg{states: states, problems: problems, radar: radar}
	if radar {
		msg.overlaps = workers.Overlaps(project, states)
	}
	return msg
}

// judgeWorkers judges each worker at now; the workers this UI started that
// no state file shows yet are added. It reads no file, so the clock can
// move the rows on (a heartbeat growing stale, a process dying) without
// reading the state files again.
func judgeWorkers(states []workers.State, children []*workers.Child, now time.Time) []workerRow {
	rows := make([]workerRow, 0, len(states)+len(children))
	bySafe := map[string]int{}
	for _, st := range states {
		bySafe[workers.SafeID(st.AgentID)] = len(rows)
		rows = append(rows, workerRow{st: st, health: st.Health(now), local: st.Local()})
	}
	for _, c := range children {
		st := c.State
		health := workers.Live
		st.Note = "started here; no state file yet"
		if code, done := c.Exited(); done {
			st.State, st.ExitCode, health = workers.StateExited, &code, workers.Exited
			st.Note = "started here; wrote no state file"
		}
		row := workerRow{st: st, health: health, local: true, child: true}
		i, ok := bySafe[workers.SafeID(st.AgentID)]
		switch {
		case !ok:
			bySafe[workers.SafeID(st.AgentID)] = len(rows)
			rows = append(rows, row)
		case rows[i].st.PID != st.PID && rows[i].st.Started.Before(st.Started.Time):
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
func byStart(a, b workerRow) int {
	if c := a.st.Started.Compare(b.st.Started.Time); c != 0 {
		return c
	}
	return natCompare(a.st.AgentID, b.st.AgentID)
}

// waitForStatesCmd waits for the state watcher's next change; like
// waitForChangeCmd, one is ever pending.
func waitForStatesCmd(ch <-chan workers.StateChange) tea.Cmd {
	return func() tea.Msg {
		c, ok := <-ch
		if !ok {
			return nil
		}
		return stateChangeMsg(c)
	}
}

// requestWorkers reads the state files, one reading at a time; the
// overlap radar looks with it at most every radarEvery, and a reading
// without it leaves the radar due (the clock's tick asks again).
func (m *Model) requestWorkers() tea.Cmd {
	if m.sub != nil {
		// The hub reads, and runs the radar at its own pace.
		m.sub.poke(kindWorkers.set())
		return nil
	}
	if m.wrkReq.busy {
		return m.wrkReq.request(nil)
	}
	now := time.Now()
	radar := now.Sub(m.wrk.radarAt) >= radarEvery
	if radar {
		m.wrk.radarAt, m.wrk.radarDue = now, false
	} else {
		m.wrk.radarDue = true
	}
	return m.wrkReq.request(workersCmd(m.opt.Tree.Project, radar))
}

// radarDue asks for a reading when the radar skipped the last one and its
// interval has passed.
func (m *Model) radarDue() tea.Cmd {
	if m.sub != nil || !m.wrk.radarDue || time.Since(m.wrk.radarAt) < radarEvery {
		return nil
	}
	return m.requestWorkers()
}

func (m *Model) workersLoaded(msg workersMsg) tea.Cmd {
	again := m.wrkReq.done()
	same := slices.Equal(m.wrk.problems, msg.problems)
	m.wrk.states, m.wrk.problems = msg.states, msg.problems
	if msg.radar {
		m.wrk.overlaps = msg.overlaps
	}
	m.wrk.rows = judgeWorkers(m.wrk.states, m.wrk.children, m.opt.Tree.Now())
	if same {
		m.wrk.rebuild(m)
		m.syncKeys()
	} else {
		m.rebuild() // the Events pane lists unreadable state files
	}
	cmds := []tea.Cmd{m.lookForNotices(fromWorkers)}
	if again {
		cmds = append(cmds, m.requestWorkers())
	}
	if m.workersRunning() && !m.ticking {
		m.ticking = true
		cmds = append(cmds, tickCmd())
	}
	return tea.Batch(cmds...)
}

// workersRunning reports whether a worker may change state without
// writing its file: a heartbeat growing stale, a process dying.
func (m *Model) workersRunning() bool {
	for i := range m.wrk.rows {
		if h := m.wrk.rows[i].health; h == workers.Live || h == workers.Stale {
			return true
		}
	}
	return false
}

func (m *Model) selectedWorker() *workerRow { return m.selection().worker }

func (m *Model) workerByAgent(agent string) *workerRow {
	for i := range m.wrk.rows {
		if m.wrk.rows[i].st.AgentID == agent {
			return &m.wrk.rows[i]
		}
	}
	return nil
}

// canStop says whether x applies to r, and why not.
func canStop(r *workerRow) (bool, string) {
	switch {
	case r == nil:
		return false, "stop: select a running worker in the workers pane (4)"
	case r.health == workers.Exited:
		return false, "stop: " + termtext.Line(r.st.AgentID) + " has already exited"
	case r.health == workers.Dead:
		return false, "stop: " + termtext.Line(r.st.AgentID) + "'s process is gone (dead); nothing to stop"
	case !r.local && r.st.Host != "":
		return false, "stop: " + termtext.Line(r.st.AgentID) + " runs on " + termtext.Line(r.st.Host) + "; stop it there"
	case !r.local:
		return false, "stop: " + termtext.Line(r.st.AgentID) + "'s state file names no host, so its pid cannot be trusted"
	}
	return true, ""
}

// workersShown reports whether the header counts workers: while any has
// not exited.
func (m *Model) workersShown() bool {
	for i := range m.wrk.rows {
		if m.wrk.rows[i].health != workers.Exited {
			return true
		}
	}
	return false
}

// workerCounts is the header's summary: workers not yet exited, and how
// many of them are stale or dead.
func (m *Model) workerCounts() string {
	n, stale, dead := 0, 0, 0
	for i := range m.wrk.rows {
		switch m.wrk.rows[i].health {
		case workers.Exited:
			continue
		case workers.Stale:
			stale++
		case workers.Dead:
			dead++
		}
		n++
	}
	s := plural(n, "worker", "workers")
	var bad []string
	if stale > 0 {
		bad = append(bad, itoa(stale)+" stale")
	}
	if dead > 0 {
		bad = append(bad, itoa(dead)+" dead")
	}
	if len(bad) > 0 {
		s += " (" + strings.Join(bad, ", ") + ")"
	}
	return s
}

type workerCols struct {
	agent, tier, plan, state, beat, pid, note int
	// bare: the tier/model column leaves out the endpoint, so a note fits.
	bare bool
}

// workerColumns sizes the workers table for width w and the workers
// shown: what a worker asks for (tier/model) first, then its agent and
// plan; the note gets the rest. When the widest note would be cut and
// dropping the endpoints' names from tier/model makes it whole, they go
// (the detail has them).
func (m *Model) workerColumns(w int, rows []workerRow, shown []int) workerCols {
	c := workerColumnsAt(w, rows, shown, false)
	note := 0
	for _, j := range shown {
		radar, text := m.workerNote(&rows[j])
		note = max(note, cellWidth(radar)+3+cellWidth(text))
	}
	if c.note < note {
		if bare := workerColumnsAt(w, rows, shown, true); bare.note >= note {
			return bare
		}
	}
	return c
}

func workerColumnsAt(w int, rows []workerRow, shown []int, bare bool) workerCols {
	agent, what, plan := len("agent"), len("tier/model"), len("plan")
	for _, j := range shown {
		st := &rows[j].st
		agent, what = max(agent, cellWidth(st.AgentID)), max(what, cellWidth(workerWhat(st, bare)))
		plan = max(plan, cellWidth(planSlug(st.Plan)))
	}
	c := workerCols{state: 10, beat: 5, pid: 7, bare: bare}
	room := w - lead + 1 - (c.state + 1) - (c.beat + 1) - (c.pid + 1)
	room = allot(room, colWant{&c.tier, what, 10, 40}, colWant{&c.agent, agent, 8, 24}, colWant{&c.plan, plan, 8, 32})
	c.note = max(0, room-1)
	return c
}

func (c workerCols) header() string {
	return "  # " + fit("agent", c.agent) + " " + fit("tier/model", c.tier) + " " + fit("plan", c.plan) + " " +
		fit("state", c.state) + " " + fit("beat", c.beat) + " " + fit("pid", c.pid) + " " + fit("note", c.note)
}

// healthCell is a worker's state in words, with a symbol so no colour is
// needed to tell them apart.
func healthCell(r *workerRow) (text string, ok bool) {
	switch r.health {
	case workers.Live:
		if r.child {
			return "○ starting", true
		}
		return "● live", true
	case workers.Stale:
		return "◌ stale", false
	case workers.Dead:
		return "✗ dead", false
	}
	if r.st.ExitCode == nil {
		return "exited ?", true
	}
	return "exited " + itoa(*r.st.ExitCode), *r.st.ExitCode == 0 || *r.st.ExitCode == 1
}

func (m *Model) workerLine(r *workerRow, c workerCols, selected bool) string {
	plain := m.plain
	var b strings.Builder
	b.WriteString(gutter(selected))
	mark := " "
	if i := slices.Index(m.wrk.marks, r.st.AgentID); i >= 0 {
		mark = itoa(i + 1)
	}
	b.WriteString(mark + " ")
	b.WriteString(fit(termtext.Line(r.st.AgentID), c.agent) + " ")
	b.WriteString(fit(termtext.Line(workerWhat(&r.st, c.bare)), c.tier) + " ")
	b.WriteString(fit(termtext.Line(planSlug(r.st.Plan)), c.plan) + " ")
	state, ok := healthCell(r)
	cell := fit(state, c.state)
	if !plain {
		switch {
		case r.health == workers.Live:
			cell = m.st.Good.Render(cell)
		case r.health == workers.Stale:
			cell = m.st.Warn.Render(cell)
		case !ok:
			cell = m.st.Bad.Render(cell)
		default:
			cell = m.st.Dim.Render(cell)
		}
	}
	b.WriteString(cell + " ")
	beat := "—"
	if last := lastSign(&r.st); !last.IsZero() && !r.child {
		beat = coarse(m.now - float64(last.UnixNano())/1e9)
	}
	b.WriteString(fit(beat, c.beat) + " ")
	pid := "—"
	if r.st.PID > 0 {
		pid = itoa(r.st.PID)
	}
	b.WriteString(fit(pid, c.pid) + " ")
	radar, note := m.workerNote(r)
	if radar == "" {
		b.WriteString(fit(termtext.Line(note), c.note))
		return m.finish(b.String(), selected)
	}
	// What the scope scanner and the radar say comes first: it asks more
	// of a person than the driver's note.
	rw := min(cellWidth(radar), c.note)
	words := fit(termtext.Line(radar), rw)
	if !m.plain && m.scopeAlarm(r) {
		words = m.st.Bad.Render(words)
	}
	if room := c.note - rw - 3; note != "" && room > 0 {
		words += " · " + fit(termtext.Line(note), room)
	} else {
		words += strings.Repeat(" ", c.note-rw)
	}
	b.WriteString(words)
	return m.finish(b.String(), selected)
}

// workerNote is a row's note column: the scope scanner's and the radar's
// words, and the driver's note (with the host of a worker elsewhere).
func (m *Model) workerNote(r *workerRow) (radar, note string) {
	note = r.st.Note
	if !r.local && r.st.Host != "" {
		note = "on " + r.st.Host + ": " + note
	}
	return m.scopeWords(r), strings.TrimSuffix(note, ": ")
}

// scopeWords is what a running worker's row says of its scope and its
// overlaps with other running workers: "⚠ 2 out of scope", the scanner's
// own words ("in scope", "no scope check"), "overlaps w-2: a.go
// (conflict)"; "" for a worker not running or a scan not yet made.
func (m *Model) scopeWords(r *workerRow) string {
	if r.health == workers.Exited || r.child {
		return ""
	}
	var parts []string
	// An agent running as the operator, unconfined, is worth a glance.
	if r.st.Contained != "" && !strings.HasPrefix(r.st.Contained, "agents are contained") {
		parts = append(parts, "⚠ not contained")
	}
	switch n := len(r.st.Violations); {
	case n > 0:
		parts = append(parts, "⚠ "+itoa(n)+" out of scope")
	case r.st.Scope != "":
		parts = append(parts, r.st.Scope)
	}
	for _, o := range m.overlapsOf(r.st.AgentID) {
		parts = append(parts, overlapWords(o, r.st.AgentID))
	}
	return strings.Join(parts, " · ")
}

// scopeAlarm reports whether a row's scope words ask for a person: a
// violation, or a change that conflicts with another worker's.
func (m *Model) scopeAlarm(r *workerRow) bool {
	if len(r.st.Violations) > 0 || strings.Contains(m.scopeWords(r), "⚠ not contained") {
		return true
	}
	for _, o := range m.overlapsOf(r.st.AgentID) {
		if o.Conflict {
			return true
		}
	}
	return false
}

// overlapsOf are the radar's overlaps agent is in.
func (m *Model) overlapsOf(agent string) []workers.Overlap {
	var out []workers.Overlap
	for _, o := range m.wrk.overlaps {
		if o.A == agent || o.B == agent {
			out = append(out, o)
		}
	}
	return out
}

// overlapWords is one overlap as agent's row says it: the other worker,
// the first paths, and whether git merges the two changes.
func overlapWords(o workers.Overlap, agent string) string {
	other := o.B
	if o.B == agent {
		other = o.A
	}
	paths := strings.Join(o.Paths[:min(2, len(o.Paths))], ", ")
	if len(o.Paths) > 2 {
		paths += " +" + itoa(len(o.Paths)-2)
	}
	verdict := "unchecked"
	switch {
	case o.Checked && o.Conflict:
		verdict = "conflict"
	case o.Checked:
		verdict = "merges"
	}
	return "overlaps " + other + ": " + paths + " (" + verdict + ")"
}

// lastSign is a worker's last heartbeat, or its start before the first.
func lastSign(st *workers.State) time.Time {
	if !st.LastHeartbeat.IsZero() {
		return st.LastHeartbeat.Time
	}
	return st.Started.Time
}

// workerWhat is how a worker asks for plans: endpoint, tier, model.
func workerWhat(st *workers.State, bare bool) string {
	var parts []string
	if st.Endpoint != "" && !bare {
		parts = append(parts, st.Endpoint)
	}
	what := st.Tier
	if st.Model != "" {
		if what != "" {
			what += "/"
		}
		what += st.Model
	}
	if what != "" {
		parts = append(parts, what)
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, " ")
}

// planSlug is the slug of the plan a state file names (a rel or a path).
func planSlug(p string) string {
	if p == "" {
		return "—"
	}
	return model.SlugOf(path.Base(strings.ReplaceAll(p, "\\", "/")))
}
