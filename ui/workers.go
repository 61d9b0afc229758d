package ui

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/ui/verbs"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// workerList is the Workers pane: the state files as last read, the
// workers this UI started, and the ones marked for logs (agent ids, in
// pane order).
type workerList struct {
	kit.Table
	kit.Filter
	states   []look.State // the last reading of the state files
	rows     []workerRow
	problems []string
	children []*proc.Child
	// overlaps is the radar's last look (the feed says when it looks).
	overlaps []look.Overlap
	marks    []string
	shown    []int // the rows the filter lets through
	cols     workerCols
	// published are the workers other machines publish through the
	// claims backend, as read at pubAt; pubErr why the last read failed.
	published []look.Published
	pubAt     time.Time
	pubErr    string
}

func (w *workerList) Rebuild(pc *uictx.Ctx) {
	all := make([]string, len(w.rows))
	for i := range w.rows {
		all[i] = w.rows[i].key()
	}
	// Marks follow their workers; one that is gone loses its mark.
	w.marks = slices.DeleteFunc(w.marks, func(a string) bool { return !slices.Contains(all, a) })
	f := w.Needle()
	w.shown = w.shown[:0]
	keys := make([]string, 0, len(w.rows))
	for i := range w.rows {
		if r := &w.rows[i]; f == "" || r.matches(f) {
			w.shown = append(w.shown, i)
			keys = append(keys, all[i])
		}
	}
	w.cols = w.columns(w.Width)
	c := w.cols
	cm := pc.Common
	w.Set(keys, func(i int, sel bool) string {
		return w.line(cm, &w.rows[w.shown[i]], c, sel)
	})
}

func (w *workerList) Selected() uictx.Selection { return uictx.Selection{} }

// row is the worker under the cursor, nil when there is none.
func (w *workerList) row() *workerRow {
	if w.Cursor >= len(w.shown) {
		return nil
	}
	return &w.rows[w.shown[w.Cursor]]
}

// target is the worker the pane's keys act on: the selected one while
// the pane is shown.
func (w *workerList) target(pc *uictx.Ctx) *workerRow {
	if pc.Shown != workersPane {
		return nil
	}
	return w.row()
}

func (w *workerList) SyncKeys(pc *uictx.Ctx, set uictx.SetKey) {
	k := &pc.Keys.Workers
	r := w.target(pc)
	ok, why := canStop(r)
	set(&k.Stop, ok, why)
	ok, why = canPause(r)
	set(&k.Pause, ok, why)
	set(&k.Mark, r != nil, "mark: select a worker in the workers pane (4)")
	set(&k.Logs, r != nil, "logs: select a worker in the workers pane (4)")
	set(&k.Diff, r != nil && (r.st.Worktree != "" || r.st.Plan != ""), "diff: select a worker with a worktree or a plan")
	set(&k.Open, r != nil && pc.Shown == workersPane, "open: select a worker in the workers pane (4)")
}

func (w *workerList) Update(pc *uictx.Ctx, msg tea.KeyMsg) (tea.Msg, bool) {
	k := &pc.Keys.Workers
	r := w.target(pc)
	switch {
	case key.Matches(msg, k.Mark):
		// Before PageDown, which space also is.
		return w.toggleMark(r), true
	case key.Matches(msg, k.Stop):
		return w.askStop(pc, r), true
	case key.Matches(msg, k.Pause):
		return w.pause(r), true
	case key.Matches(msg, k.Logs) && r != nil && r.pub != nil && r.pub.Serve != "":
		return w.open(pc, r), true // its machine serves its log: fetched into the detail
	case key.Matches(msg, k.Logs) && r != nil && r.pub != nil:
		return uictx.Status(elsewhereLog(r), false), true
	case key.Matches(msg, k.Logs):
		return uictx.LogsReq{}, true
	case key.Matches(msg, k.Diff):
		return w.diff(pc, r), true
	case key.Matches(msg, k.Open):
		return w.open(pc, r), true
	}
	return nil, false
}

func (w *workerList) View(pc *uictx.Ctx, h int) []string {
	empty := "no workers: s spawns one; workers that cron, systemd or anyone starts show here too"
	if pc.Opt.Self == "" || pc.Opt.ReadOnly {
		empty = "no workers: the ones cron, systemd or anyone starts show here"
	}
	if len(w.problems) > 0 && len(w.rows) == 0 {
		empty = "⚠ " + termtext.Line(w.problems[0])
	}
	title := "Workers"
	if w.pubErr != "" {
		// The other machines' workers shown are the last read's.
		title += " · ⚠ other machines: " + termtext.Line(w.pubErr)
	}
	return pc.TableBox(kit.FilterTitle(title, &w.Filter), w.cols.header(), &w.Table, h, kit.EmptyText(&w.Filter, empty))
}

// workerRow is a line of the Workers pane: a state file as judged when it
// was read, or a worker this UI started that has written none yet.
type workerRow struct {
	st     look.State
	health look.Health
	local  bool // written on this host: its pid can be checked and signalled
	child  bool // started here, no state file of its own yet
	// pub is the record another machine published, for a worker shown
	// from the claims backend; seenAt is when this machine first saw it
	// as it is (its heartbeat age, on this machine's clock).
	pub    *look.Published
	seenAt time.Time
}

// stateChangeMsg is one debounced burst of changes to the state files.
type stateChangeMsg look.StateChange

// workersCmd reads every state file, and with radar asks which running
// workers touch the same paths; judgeWorkers turns them into rows.
func workersCmd(project string, radar bool) tea.Cmd {
	return func() tea.Msg { return readWorkers(project, radar) }
}

// judgeWorkers judges each worker at now; the workers this UI started that
// no state file shows yet are added. It reads no file, so the clock can
// move the rows on (a heartbeat growing stale, a process dying) without
// reading the state files again.
func judgeWorkers(states []look.State, children []*proc.Child, now time.Time) []workerRow {
	rows := make([]workerRow, 0, len(states)+len(children))
	bySafe := map[string]int{}
	for _, st := range states {
		bySafe[tree.SafeID(st.AgentID)] = len(rows)
		rows = append(rows, workerRow{st: st, health: st.Health(now), local: st.Local()})
	}
	for _, c := range children {
		st := c.State
		health := look.Live
		st.Note = "started here; no state file yet"
		if code, done := c.Exited(); done {
			st.State, st.ExitCode, health = look.StateExited, &code, look.Exited
			st.Note = "started here; wrote no state file"
		}
		row := workerRow{st: st, health: health, local: true, child: true}
		i, ok := bySafe[tree.SafeID(st.AgentID)]
		switch {
		case !ok:
			bySafe[tree.SafeID(st.AgentID)] = len(rows)
			rows = append(rows, row)
		case rows[i].st.PID != st.PID && rows[i].st.Started.Before(st.Started.Time):
			// The state file is an earlier run's: this one is newer.
			rows[i] = row
		}
	}
	slices.SortStableFunc(rows, byStart)
	return rows
}

// judge is the rows at now: this machine's state files and the workers
// it started, then every other machine's published workers by host.
func (w *workerList) judge(now time.Time) {
	w.rows = judgeWorkers(w.states, w.children, now)
	for i := range w.published {
		p := &w.published[i]
		w.rows = append(w.rows, workerRow{st: p.State, health: p.Health, pub: p, seenAt: w.pubAt.Add(-p.SeenFor)})
	}
}

// byStart orders workers by when their run started, then by agent id: a
// key that never changes while a run lasts, so a worker that exits, goes
// stale or dies stays where it is under the operator's cursor, and a new
// one joins at the end.
func byStart(a, b workerRow) int {
	if c := a.st.Started.Compare(b.st.Started.Time); c != 0 {
		return c
	}
	return kit.NatCompare(a.st.AgentID, b.st.AgentID)
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
		if h := m.wrk.rows[i].health; h == look.Live || h == look.Stale {
			return true
		}
	}
	return false
}

func (m *Model) selectedWorker() *workerRow {
	if m.pane != workersPane {
		return nil
	}
	return m.wrk.row()
}

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
	case r.health == look.Exited:
		return false, "stop: " + termtext.Line(r.st.AgentID) + " has already exited"
	case r.health == look.Dead && r.pub != nil:
		return false, "stop: " + termtext.Line(r.st.AgentID) + " on " + termtext.Line(r.st.Host) + " is dead (silent past its lease); nothing would read a stop request"
	case r.health == look.Dead:
		return false, "stop: " + termtext.Line(r.st.AgentID) + "'s process is gone (dead); nothing to stop"
	case r.pub != nil && r.pub.Problem != "":
		return false, "stop: " + termtext.Line(r.st.AgentID) + "'s record cannot be read: " + termtext.Line(r.pub.Problem)
	case r.pub != nil:
		return true, ""
	case !r.local && r.st.Host != "":
		return false, "stop: " + termtext.Line(r.st.AgentID) + " runs on " + termtext.Line(r.st.Host) + "; stop it there"
	case !r.local:
		return false, "stop: " + termtext.Line(r.st.AgentID) + "'s state file names no host, so its pid cannot be trusted"
	}
	return true, ""
}

// canPause says whether p applies to r, and why not: a live local run
// whose driver can pause it, and, to resume, one paused by hand (a run
// paused at its budget goes on when its budget is raised).
func canPause(r *workerRow) (bool, string) {
	if r == nil {
		return false, "pause: select a running worker in the workers pane (4)"
	}
	who := termtext.Line(r.st.AgentID)
	switch {
	case r.health != look.Live:
		state, _ := healthCell(r)
		return false, "pause: " + who + " has no run going (" + state + ")"
	case !r.local:
		return false, "pause: " + who + " does not run on this machine; pause it there (fleetwatch worker pause)"
	case r.child:
		return false, "pause: " + who + " has written no state file yet; its driver cannot be asked"
	case !r.st.Pausable:
		return false, "pause: " + who + "'s driver cannot pause a run (an older fleetwatch, or anchor's)"
	case kit.BudgetPaused(&r.st):
		return false, "resume: " + who + " reached its budget: extend it or stop it in the inbox (7)"
	case r.st.Paused == "" && r.st.Agent == nil:
		return false, "pause: " + who + " runs no agent now; nothing to pause"
	}
	return true, ""
}

// pause is p: the selected worker's run paused where it is, or resumed.
func (w *workerList) pause(r *workerRow) tea.Msg {
	if ok, _ := canPause(r); !ok {
		return nil
	}
	return verbs.PauseCmd(r.st, r.st.Paused == "")
}

// workersShown reports whether the header counts workers: while any has
// not exited.
func (m *Model) workersShown() bool {
	for i := range m.wrk.rows {
		if m.wrk.rows[i].health != look.Exited {
			return true
		}
	}
	return false
}

// workerCounts is the header's summary: workers not yet exited, and how
// many of them are stale or dead; alarm is that last part alone, "" when
// none is.
func (m *Model) workerCounts() (summary, alarm string) {
	n, stale, dead := 0, 0, 0
	for i := range m.wrk.rows {
		switch m.wrk.rows[i].health {
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

type workerCols struct {
	// host is 0 unless another machine's workers are shown.
	agent, host, tier, plan, state, beat, pid, note int
	// bare: the tier/model column leaves out the endpoint, so a note fits.
	bare bool
}

// columns sizes the workers table for width and the workers
// shown: what a worker asks for (tier/model) first, then its agent and
// plan; the note gets the rest. When the widest note would be cut and
// dropping the endpoints' names from tier/model makes it whole, they go
// (the detail has them).
func (w *workerList) columns(width int) workerCols {
	rows, shown := w.rows, w.shown
	c := workerColumnsAt(width, rows, shown, false)
	note := 0
	for _, j := range shown {
		radar, text := w.note(&rows[j])
		note = max(note, kit.CellWidth(radar)+3+kit.CellWidth(text))
	}
	if c.note < note {
		if bare := workerColumnsAt(width, rows, shown, true); bare.note >= note {
			return bare
		}
	}
	return c
}

func workerColumnsAt(w int, rows []workerRow, shown []int, bare bool) workerCols {
	agent, what, plan, host := len("agent"), len("tier/model"), len("plan"), 0
	for _, j := range shown {
		st := &rows[j].st
		agent, what = max(agent, kit.CellWidth(st.AgentID)), max(what, kit.CellWidth(workerWhat(st, bare)))
		plan = max(plan, kit.CellWidth(kit.PlanSlug(st.Plan)))
		if rows[j].pub != nil {
			host = len("host")
		}
	}
	for _, j := range shown {
		if host > 0 {
			host = max(host, kit.CellWidth(rows[j].st.Host))
		}
	}
	c := workerCols{state: 10, beat: 5, pid: 7, bare: bare}
	room := w - kit.Lead + 1 - (c.state + 1) - (c.beat + 1) - (c.pid + 1)
	if host > 0 {
		c.host = min(host, 16, max(room/6, 4))
		room -= c.host + 1
	}
	room = kit.Allot(room, kit.Col(&c.tier, what, 10, 40), kit.Col(&c.agent, agent, 8, 24), kit.Col(&c.plan, plan, 8, 32))
	c.note = max(0, room-1)
	return c
}

func (c workerCols) header() string {
	host := ""
	if c.host > 0 {
		host = kit.Fit("host", c.host) + " "
	}
	return "  # " + kit.Fit("agent", c.agent) + " " + host + kit.Fit("tier/model", c.tier) + " " + kit.Fit("plan", c.plan) + " " +
		kit.Fit("state", c.state) + " " + kit.Fit("beat", c.beat) + " " + kit.Fit("pid", c.pid) + " " + kit.Fit("note", c.note)
}

// healthCell is a worker's state in words, with a symbol so no colour is
// needed to tell them apart.
func healthCell(r *workerRow) (text string, ok bool) {
	switch r.health {
	case look.Live:
		switch {
		case r.child:
			return "○ starting", true
		case r.st.Paused != "":
			return "⏸ paused", true
		}
		return "● live", true
	case look.Stale:
		return "◌ stale", false
	case look.Dead:
		return "✗ dead", false
	}
	if r.st.ExitCode == nil {
		return "exited ?", true
	}
	return "exited " + kit.Itoa(*r.st.ExitCode), *r.st.ExitCode == 0 || *r.st.ExitCode == 1
}

// line is a worker's row, not yet highlighted (kit.Table highlights the selected one).
func (w *workerList) line(cm *uictx.Common, r *workerRow, c workerCols, selected bool) string {
	plain := cm.Plain
	var b strings.Builder
	b.WriteString(kit.Gutter(selected))
	mark := " "
	if i := slices.Index(w.marks, r.st.AgentID); i >= 0 && r.pub == nil {
		mark = kit.Itoa(i + 1)
	}
	b.WriteString(mark + " ")
	b.WriteString(kit.Fit(termtext.Line(r.st.AgentID), c.agent) + " ")
	if c.host > 0 {
		b.WriteString(kit.Fit(termtext.Line(cmp.Or(r.st.Host, "—")), c.host) + " ")
	}
	b.WriteString(kit.Fit(termtext.Line(workerWhat(&r.st, c.bare)), c.tier) + " ")
	b.WriteString(kit.Fit(termtext.Line(kit.PlanSlug(r.st.Plan)), c.plan) + " ")
	state, ok := healthCell(r)
	cell := kit.Fit(state, c.state)
	if !plain {
		switch {
		case r.health == look.Live && r.st.Paused != "":
			cell = cm.St.Warn.Render(cell)
		case r.health == look.Live:
			cell = cm.St.Good.Render(cell)
		case r.health == look.Stale:
			cell = cm.St.Warn.Render(cell)
		case !ok:
			cell = cm.St.Bad.Render(cell)
		default:
			cell = cm.St.Dim.Render(cell)
		}
	}
	b.WriteString(cell + " ")
	beat := "—"
	switch last := lastSign(&r.st); {
	case r.pub != nil:
		// Its own clock says nothing here: how long this machine has seen
		// its record unchanged.
		beat = kit.Coarse(cm.Now - float64(r.seenAt.UnixNano())/1e9)
	case !last.IsZero() && !r.child:
		beat = kit.Coarse(cm.Now - float64(last.UnixNano())/1e9)
	}
	b.WriteString(kit.Fit(beat, c.beat) + " ")
	pid := "—"
	if r.st.PID > 0 {
		pid = kit.Itoa(r.st.PID)
	}
	b.WriteString(kit.Fit(pid, c.pid) + " ")
	radar, note := w.note(r)
	if radar == "" {
		b.WriteString(kit.Fit(termtext.Line(note), c.note))
		return b.String()
	}
	// What the scope scanner and the radar say comes first: it asks more
	// of a person than the driver's note.
	rw := min(kit.CellWidth(radar), c.note)
	words := kit.Fit(termtext.Line(radar), rw)
	if !cm.Plain && w.scopeAlarm(r) {
		words = cm.St.Bad.Render(words)
	}
	if room := c.note - rw - 3; note != "" && room > 0 {
		words += " · " + kit.Fit(termtext.Line(note), room)
	} else {
		words += strings.Repeat(" ", c.note-rw)
	}
	b.WriteString(words)
	return b.String()
}

// note is a row's note column: the scope scanner's and the radar's
// words, and the driver's note (with the host of a worker elsewhere).
func (w *workerList) note(r *workerRow) (radar, note string) {
	note = r.st.Note
	switch {
	case r.pub != nil && r.pub.LastLine != "":
		note = strings.TrimPrefix(note+" › "+r.pub.LastLine, " › ")
	case r.pub == nil && !r.local && r.st.Host != "":
		note = "on " + r.st.Host + ": " + note
	}
	if r.health == look.Live && r.st.Spent != (ledger.Totals{}) {
		// What the run has cost so far comes before what it does.
		note = strings.TrimSuffix(r.st.Spent.String()+" · "+note, " · ")
	}
	return w.scopeWords(r), strings.TrimSuffix(note, ": ")
}

// scopeWords is what a running worker's row says of its scope and its
// overlaps with other running workers: "⚠ 2 out of scope", the scanner's
// own words ("in scope", "no scope check"), "overlaps w-2: a.go
// (conflict)"; "" for a worker not running or a scan not yet made.
func (w *workerList) scopeWords(r *workerRow) string {
	if r.health == look.Exited || r.child {
		return ""
	}
	var parts []string
	// An agent running as the operator, unconfined, is worth a glance.
	if r.st.Contained != "" && !strings.HasPrefix(r.st.Contained, "agents are contained") {
		parts = append(parts, "⚠ not contained")
	}
	switch n := len(r.st.Violations); {
	case n > 0:
		parts = append(parts, "⚠ "+kit.Itoa(n)+" out of scope")
	case r.st.Scope != "":
		parts = append(parts, r.st.Scope)
	}
	for _, o := range w.overlapsOf(r.st.AgentID) {
		parts = append(parts, overlapWords(o, r.st.AgentID))
	}
	return strings.Join(parts, " · ")
}

// scopeAlarm reports whether a row's scope words ask for a person: a
// violation, or a change that conflicts with another worker's.
func (w *workerList) scopeAlarm(r *workerRow) bool {
	if len(r.st.Violations) > 0 || strings.Contains(w.scopeWords(r), "⚠ not contained") {
		return true
	}
	for _, o := range w.overlapsOf(r.st.AgentID) {
		if o.Conflict {
			return true
		}
	}
	return false
}

// overlapsOf are the radar's overlaps agent is in.
func (w *workerList) overlapsOf(agent string) []look.Overlap {
	var out []look.Overlap
	for _, o := range w.overlaps {
		if o.A == agent || o.B == agent {
			out = append(out, o)
		}
	}
	return out
}

// overlapWords is one overlap as agent's row says it: the other worker,
// the first paths, and whether git merges the two changes.
func overlapWords(o look.Overlap, agent string) string {
	other := o.B
	if o.B == agent {
		other = o.A
	}
	paths := strings.Join(o.Paths[:min(2, len(o.Paths))], ", ")
	if len(o.Paths) > 2 {
		paths += " +" + kit.Itoa(len(o.Paths)-2)
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
func lastSign(st *look.State) time.Time {
	if !st.LastHeartbeat.IsZero() {
		return st.LastHeartbeat.Time
	}
	return st.Started.Time
}

// workerWhat is how a worker asks for plans: endpoint, tier, model.
func workerWhat(st *look.State, bare bool) string {
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

// PlanSlug is the slug of the plan a state file names (a rel or a path).
// running are the live runs this cockpit follows, with what each has spent
// so far, which the Fleet pane lists.
func running(rows []workerRow) []look.State {
	var out []look.State
	for i := range rows {
		r := &rows[i]
		if r.health != look.Live || r.child || r.st.Agent == nil && r.st.Spent == (ledger.Totals{}) {
			continue
		}
		out = append(out, r.st)
	}
	return out
}

// key is the row's identity in the table: its agent id, and its host for
// another machine's worker (an agent id may run on two machines).
func (r *workerRow) key() string {
	if r.pub != nil {
		return r.st.AgentID + " on " + r.st.Host
	}
	return r.st.AgentID
}

func (r *workerRow) matches(f string) bool {
	st := &r.st
	state, _ := healthCell(r)
	return kit.AnyContains(f, st.AgentID, st.Endpoint, st.Tier, st.Model, st.Plan, st.Note, st.Host, state, st.Paused)
}

// toggleMark marks the selected worker r for the logs, or unmarks it,
// and asks the root to move on to the next.
func (w *workerList) toggleMark(r *workerRow) tea.Msg {
	if r == nil {
		return nil
	}
	if r.pub != nil {
		return uictx.Status("✗ "+elsewhereLog(r), true)
	}
	if i := slices.Index(w.marks, r.st.AgentID); i >= 0 {
		w.marks = slices.Delete(w.marks, i, i+1)
	} else if len(w.marks) >= maxLogPanes {
		return uictx.Status("✗ logs show at most four workers side by side; space on a marked one unmarks it", true)
	} else {
		w.marks = append(w.marks, r.st.AgentID)
	}
	w.Invalidate()
	return uictx.MoveReq(1)
}

// open shows the worker r: its state file, its note and the end of its
// log; the radar's overlaps are the ones seen when it opens.
func (w *workerList) open(pc *uictx.Ctx, r *workerRow) tea.Msg {
	if r == nil {
		return nil
	}
	if r.pub != nil {
		p, seenAt := *r.pub, r.seenAt
		c := pc.Claims
		return uictx.Detail("worker:"+p.Host+"/"+p.AgentID, "worker · "+p.AgentID+" on "+p.Host, func() func(*uictx.Ctx) []string {
			p, seenAt := rereadPublished(c, p, seenAt)
			lines, err := fetchServedLog(p)
			return func(pc *uictx.Ctx) []string { return publishedDetail(pc.Common, p, seenAt, lines, err) }
		})
	}
	agent, project := r.st.AgentID, pc.Opt.Tree.Project
	overlaps := w.overlapsOf(agent)
	return uictx.Detail("worker:"+agent, "worker · "+agent, func() func(*uictx.Ctx) []string {
		wd := look.ReadWorkerDetail(project, agent)
		return func(pc *uictx.Ctx) []string { return workerDetail(pc.Common, wd, overlaps) }
	})
}

// elsewhereLog says where the log of r, a worker on another machine, is:
// its log is that machine's file, not this one's.
func elsewhereLog(r *workerRow) string {
	where := termtext.Line(r.st.Host) + ":" + termtext.Line(cmp.Or(r.pub.LogPath, look.LogDir+"/"+tree.SafeID(r.st.AgentID)+".log"))
	return "logs: " + termtext.Line(r.st.AgentID) + " runs on " + termtext.Line(r.st.Host) + "; its log is " + where + " (enter shows its last line)"
}

// publishedDetail is a worker another machine publishes: its record as
// read, judged on this machine's clock, and where its log is.
func publishedDetail(cm *uictx.Common, p look.Published, seenAt time.Time, log []string, logErr error) []string {
	d := &uictx.DetailText{C: cm}
	now := float64(cm.Opt.Tree.Now().UnixNano()) / 1e9
	d.Heading("Published record")
	if p.Problem != "" {
		d.Field("unreadable", p.Problem)
	}
	exit := "(none)"
	if p.ExitCode != nil {
		exit = kit.Itoa(*p.ExitCode)
	}
	for _, kv := range [][2]string{{"agent_id", p.AgentID}, {"host", p.Host}, {"tier", p.Tier}, {"model", p.Model},
		{"endpoint", p.Endpoint}, {"plan", p.Plan}, {"state", p.State.State + " (" + string(p.Health) + " on this machine's clock)"},
		{"unchanged for", kit.Coarse(now - kit.UnixOf(seenAt))}, {"exit_code", exit}, {"spent", p.Spent.String()}, {"paused", p.Paused}, {"pid", kit.Itoa(p.PID)}} {
		d.Field(kv[0], kv[1])
	}
	d.Heading("Note")
	d.Note(cmp.Or(p.Note, "(none)"))
	d.Heading("Log · on " + p.Host)
	d.Field("last line", cmp.Or(p.LastLine, "(none)"))
	d.Field("where", p.Host+":"+cmp.Or(p.LogPath, "(not said)"))
	switch {
	case p.Serve == "":
		d.Note(p.Host + " runs no fleetwatch serve: read the log there")
	case logErr != nil:
		d.Note(p.Host + "'s fleetwatch serve: " + logErr.Error())
	default:
		d.Heading("Log · last " + kit.Itoa(len(log)) + " lines · from " + p.Host + "'s fleetwatch serve at " + p.Serve)
		for _, l := range log {
			d.Lines = append(d.Lines, "  "+logLine(cm, l))
		}
	}
	return d.Lines
}

// stateKeys are the state file's fields this version knows, in its order.
var stateKeys = []string{"pid", "agent_id", "tier", "model", "plan", "worktree", "port", "started",
	"last_heartbeat", "state", "exit_code", "host", "heartbeat_every", "endpoint", "note", "contained"}

// scopeKeys are the scope scanner's fields, shown under their own heading.
var scopeKeys = []string{"mode", "scope", "touched", "touched_more", "violations"}

// spendKeys are the run's spend and pause, shown under their own heading.
var spendKeys = []string{"spent", "paused", "paused_at", "pausable"}

func workerDetail(cm *uictx.Common, w look.WorkerDetail, overlaps []look.Overlap) []string {
	d := &uictx.DetailText{C: cm}
	d.Heading("State file")
	d.Field("file", cm.ProjectRel(w.StateFile))
	switch {
	case w.StateMissing:
		d.Note("no state file: the worker has not written one yet, or it was removed")
	case w.StateErr != "":
		d.Field("unreadable", cm.ProjectRel(w.StateErr))
	}
	if w.Raw != nil && w.StateErr == "" {
		detailStateFields(d, &w.State)
		d.ExtraFields(w.Raw, slices.Concat(stateKeys, scopeKeys, spendKeys)...)
	}
	d.Heading("Note")
	if w.State.Note == "" {
		d.Note("(none)")
	} else {
		d.Block(w.State.Note)
	}
	detailScope(d, &w.State, overlaps)
	detailSpend(d, &w.State)
	if w.Raw != nil {
		d.Heading("On disk")
		d.RawJSON(w.Raw)
	}
	d.Heading("Log · last " + kit.Itoa(look.DetailLogLines) + " lines · " + cm.ProjectRel(w.LogFile))
	switch {
	case w.LogErr != "":
		d.Note(cm.ProjectRel(w.LogErr))
	case w.LogMissing:
		d.Note("no log yet")
	case len(w.Log) == 0:
		d.Note("(empty)")
	}
	for _, l := range w.Log {
		d.Lines = append(d.Lines, "  "+logLine(cm, l))
	}
	return d.Lines
}

// scope lists what the scope scanner saw of the worker's change and
// the radar's overlaps with the other running workers.
// A worker the scanner never looked at has no such section.
func detailScope(d *uictx.DetailText, st *look.State, overlaps []look.Overlap) {
	if st.Mode == "" && st.Scope == "" && len(st.Touched) == 0 && len(st.Violations) == 0 && len(overlaps) == 0 {
		return
	}
	d.Heading("Scope")
	d.Field("mode", st.Mode)
	d.Field("scope", st.Scope)
	if len(st.Violations) == 0 {
		d.Note("no path out of scope")
	} else {
		d.Note(kit.Plural(len(st.Violations), "path", "paths") + " out of scope:")
		for _, p := range st.Violations {
			d.Note("  ⚠ " + p)
		}
	}
	touched := kit.Plural(len(st.Touched), "path", "paths") + " touched"
	if st.TouchedMore > 0 {
		touched += " (and " + kit.Itoa(st.TouchedMore) + " more not listed)"
	}
	d.Note(touched + ":")
	for _, p := range st.Touched {
		d.Note("  " + p)
	}
	for _, o := range overlaps {
		d.Note(overlapWords(o, st.AgentID))
		if len(o.Conflicts) > 0 {
			d.Note("  conflicts in " + strings.Join(o.Conflicts, ", "))
		}
		if o.Note != "" {
			d.Note("  " + o.Note)
		}
	}
}

// spend is what the run has spent so far and why it is paused; a worker
// whose driver says neither has no such section.
func detailSpend(d *uictx.DetailText, st *look.State) {
	if st.Spent == (ledger.Totals{}) && st.Paused == "" && !st.Pausable {
		return
	}
	d.Heading("Spend")
	d.Field("spent", st.Spent.String())
	if st.Paused != "" {
		d.Field("paused", st.Paused)
		if !st.PausedAt.IsZero() {
			now := d.C.Opt.Tree.Now()
			d.Field("paused_at", uictx.Stamp(float64(st.PausedAt.UnixNano())/1e9, float64(now.UnixNano())/1e9))
		}
	}
	if st.Pausable {
		d.Note("its driver pauses and resumes the run: p in the workers pane, or the inbox (7)")
	}
}

func detailStateFields(d *uictx.DetailText, st *look.State) {
	now := d.C.Opt.Tree.Now()
	when := func(s look.Stamp) string {
		if s.IsZero() {
			return "(none)"
		}
		return uictx.Stamp(float64(s.UnixNano())/1e9, float64(now.UnixNano())/1e9)
	}
	exit := "(none)"
	if st.ExitCode != nil {
		exit = kit.Itoa(*st.ExitCode)
	}
	vals := []string{kit.Itoa(st.PID), st.AgentID, st.Tier, st.Model, st.Plan, st.Worktree, kit.Itoa(st.Port),
		when(st.Started), when(st.LastHeartbeat), st.State + " (" + string(st.Health(now)) + " now)", exit, st.Host,
		strconv.FormatFloat(st.HeartbeatEvery, 'f', -1, 64) + " s", st.Endpoint, st.Note, cmp.Or(st.Contained, "(not said)")}
	for i, k := range stateKeys {
		if k == "worktree" {
			vals[i] = d.C.ProjectRel(vals[i])
		}
		d.Field(k, vals[i])
	}
}

// diff is `d`: the worker r's worktree, else its plan.
func (w *workerList) diff(pc *uictx.Ctx, r *workerRow) tea.Msg {
	if r == nil {
		return nil
	}
	project, st := pc.Opt.Tree.Project, r.st
	return uictx.Diff("worker "+termtext.Line(st.AgentID), "worker\x00"+st.AgentID, func() (look.Diff, error) {
		return look.DiffOfWorker(project, st)
	})
}

// askStop confirms stopping the worker r.
func (w *workerList) askStop(pc *uictx.Ctx, r *workerRow) tea.Msg {
	if ok, _ := canStop(r); !ok {
		return nil
	}
	if r.pub != nil {
		return w.askStopRemote(pc, r)
	}
	st := *r
	who := termtext.Line(st.st.AgentID)
	then := "it stops its agent and exits."
	if st.st.Plan != "" {
		then = "it stops its agent, releases " + termtext.Line(kit.PlanSlug(st.st.Plan)) + " back to its lane, and exits."
	}
	body := []string{"Send SIGTERM to " + who + " (pid " + kit.Itoa(st.st.PID) + ") and its process group; " + then}
	if st.health == look.Stale {
		body = append(body, "⚠ Its last heartbeat was "+kit.Coarse(pc.Now-float64(lastSign(&st.st).UnixNano())/1e9)+" ago; it may be stuck.")
	}
	project, t := pc.Opt.Tree.Project, pc.Opt.Tree
	// No lease to look at again: stopCmd checks the state file instead.
	return uictx.QuestionReq{Q: uictx.Question{
		Title: "Stop " + who, Body: body, Verb: "stop",
		Do: func(model.Lane, string) tea.Cmd { return verbs.StopCmd(project, t, st.st, st.child) },
	}}
}

// askStopRemote confirms asking r, a worker on another machine, to stop
// through the record it publishes: no signal crosses machines.
func (w *workerList) askStopRemote(pc *uictx.Ctx, r *workerRow) tea.Msg {
	if pc.Claims == nil {
		return nil
	}
	who, host := termtext.Line(r.st.AgentID), termtext.Line(r.st.Host)
	then := "it stops its agent and exits."
	if r.st.Plan != "" {
		then = "it stops its agent, gives " + termtext.Line(kit.PlanSlug(r.st.Plan)) + " back, and exits."
	}
	body := []string{"Ask " + who + " on " + host + " to stop, through the claims backend: at its next heartbeat " + then}
	if r.health == look.Stale {
		body = append(body, "⚠ Its record has not changed for "+kit.Coarse(pc.Now-kit.UnixOf(r.seenAt))+"; it may not hear the request.")
	}
	c, st := pc.Claims, r.st
	return uictx.QuestionReq{Q: uictx.Question{
		Title: "Stop " + who + " on " + host, Body: body, Verb: "stop",
		Do: func(model.Lane, string) tea.Cmd { return remoteStopCmd(c, st) },
	}}
}
