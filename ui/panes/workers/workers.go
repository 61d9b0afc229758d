// Package workers is the cockpit's Workers pane: the workers' state files
// and the other machines' published workers, as the root reads and judges
// them (uictx.Ctx.Workers), each with its health, its scope and the
// radar's overlaps; the keys that stop (x) or pause (p) a worker, diff its
// change (d), open it (enter), mark workers for the logs side by side
// (space, then l), and talk to a running conversation (t tells it a note,
// i interrupts its turn: talk.go). It never reads a state file itself: the root does, once
// for the pane, the header and the notices.
package workers

import (
	"cmp"
	"slices"
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
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// Pane is the Workers pane: the rows as the root last judged them
// (uictx.Ctx.Workers), the ones the filter lets through, and the workers
// marked for the logs (agent ids, in pane order).
type Pane struct {
	kit.Table
	kit.Filter
	id       uictx.PaneID // its place in the tab order
	rows     []uictx.WorkerRow
	problems []string
	overlaps []look.Overlap // the radar's last look
	pubErr   string
	marks    []string
	shown    []int // the rows the filter lets through
	cols     workerCols
}

// New is the Workers pane at id in the tab order.
func New(id uictx.PaneID) uictx.Pane { return &Pane{id: id} }

// Marks are the workers marked for the logs, in the order marked.
func (w *Pane) Marks() []string { return w.marks }

// ClearMarks unmarks every worker, reporting whether any was marked.
func (w *Pane) ClearMarks() bool {
	if len(w.marks) == 0 {
		return false
	}
	w.marks = nil
	w.Invalidate()
	return true
}

// Row is the worker under the cursor, nil when there is none.
func (w *Pane) Row() *uictx.WorkerRow { return w.row() }

// Bare reports whether the tier/model column leaves the endpoints out.
func (w *Pane) Bare() bool { return w.cols.bare }

func (w *Pane) Rebuild(pc *uictx.Ctx) {
	if r := pc.Workers; r != nil {
		w.rows, w.problems, w.overlaps, w.pubErr = r.Rows, r.Problems, r.Overlaps, r.PubErr
	}
	all := make([]string, len(w.rows))
	for i := range w.rows {
		all[i] = w.rows[i].Key()
	}
	// Marks follow their workers; one that is gone loses its mark.
	w.marks = slices.DeleteFunc(w.marks, func(a string) bool { return !slices.Contains(all, a) })
	f := w.Needle()
	w.shown = w.shown[:0]
	keys := make([]string, 0, len(w.rows))
	for i := range w.rows {
		if r := &w.rows[i]; f == "" || matches(r, f) {
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

func (w *Pane) Selected() uictx.Selection { return uictx.Selection{} }

// row is the worker under the cursor, nil when there is none.
func (w *Pane) row() *uictx.WorkerRow {
	if w.Cursor >= len(w.shown) {
		return nil
	}
	return &w.rows[w.shown[w.Cursor]]
}

// target is the worker the pane's keys act on: the selected one while
// the pane is shown.
func (w *Pane) target(pc *uictx.Ctx) *uictx.WorkerRow {
	if pc.Shown != w.id {
		return nil
	}
	return w.row()
}

func (w *Pane) SyncKeys(pc *uictx.Ctx, set uictx.SetKey) {
	k := &pc.Keys.Workers
	r := w.target(pc)
	ok, why := canStop(r)
	set(&k.Stop, ok, why)
	ok, why = canPause(r)
	set(&k.Pause, ok, why)
	set(&k.Mark, r != nil, "mark: select a worker in the workers pane (4)")
	set(&k.Logs, r != nil, "logs: select a worker in the workers pane (4)")
	set(&k.Diff, r != nil && (r.St.Worktree != "" || r.St.Plan != ""), "diff: select a worker with a worktree or a plan")
	set(&k.Open, r != nil && pc.Shown == w.id, "open: select a worker in the workers pane (4)")
	ok, why = canTalk(r, "tell")
	set(&k.Tell, ok, why)
	ok, why = canTalk(r, "interrupt")
	set(&k.Interrupt, ok, why)
}

func (w *Pane) Update(pc *uictx.Ctx, msg tea.KeyMsg) (tea.Msg, bool) {
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
	case key.Matches(msg, k.Tell):
		return askTell(pc, r), true
	case key.Matches(msg, k.Interrupt):
		return askInterrupt(pc, r), true
	case key.Matches(msg, k.Logs) && r != nil && r.Pub != nil && r.Pub.Serve != "":
		return w.open(pc, r), true // its machine serves its log: fetched into the detail
	case key.Matches(msg, k.Logs) && r != nil && r.Pub != nil:
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

func (w *Pane) View(pc *uictx.Ctx, h int) []string {
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

// canStop says whether x applies to r, and why not.
func canStop(r *uictx.WorkerRow) (bool, string) {
	switch {
	case r == nil:
		return false, "stop: select a running worker in the workers pane (4)"
	case r.Health == look.Exited:
		return false, "stop: " + termtext.Line(r.St.AgentID) + " has already exited"
	case r.Health == look.Dead && r.Pub != nil:
		return false, "stop: " + termtext.Line(r.St.AgentID) + " on " + termtext.Line(r.St.Host) + " is dead (silent past its lease); nothing would read a stop request"
	case r.Health == look.Dead:
		return false, "stop: " + termtext.Line(r.St.AgentID) + "'s process is gone (dead); nothing to stop"
	case r.Pub != nil && r.Pub.Problem != "":
		return false, "stop: " + termtext.Line(r.St.AgentID) + "'s record cannot be read: " + termtext.Line(r.Pub.Problem)
	case r.Pub != nil:
		return true, ""
	case !r.Local && r.St.Host != "":
		return false, "stop: " + termtext.Line(r.St.AgentID) + " runs on " + termtext.Line(r.St.Host) + "; stop it there"
	case !r.Local:
		return false, "stop: " + termtext.Line(r.St.AgentID) + "'s state file names no host, so its pid cannot be trusted"
	}
	return true, ""
}

// canPause says whether p applies to r, and why not: a live local run
// whose driver can pause it, and, to resume, one paused by hand (a run
// paused at its budget goes on when its budget is raised).
func canPause(r *uictx.WorkerRow) (bool, string) {
	if r == nil {
		return false, "pause: select a running worker in the workers pane (4)"
	}
	who := termtext.Line(r.St.AgentID)
	switch {
	case r.Health != look.Live:
		state, _ := HealthCell(r)
		return false, "pause: " + who + " has no run going (" + state + ")"
	case !r.Local:
		return false, "pause: " + who + " does not run on this machine; pause it there (fleetwatch worker pause)"
	case r.Child:
		return false, "pause: " + who + " has written no state file yet; its driver cannot be asked"
	case !r.St.Pausable:
		return false, "pause: " + who + "'s driver cannot pause a run (an older fleetwatch, or anchor's)"
	case kit.BudgetPaused(&r.St):
		return false, "resume: " + who + " reached its budget: extend it or stop it in the inbox (7)"
	case r.St.Paused == "" && r.St.Agent == nil:
		return false, "pause: " + who + " runs no agent now; nothing to pause"
	}
	return true, ""
}

// pause is p: the selected worker's run paused where it is, or resumed.
func (w *Pane) pause(r *uictx.WorkerRow) tea.Msg {
	if ok, _ := canPause(r); !ok {
		return nil
	}
	return verbs.PauseCmd(r.St, r.St.Paused == "")
}

type workerCols struct {
	// host is 0 unless another machine's workers are shown.
	agent, host, tier, plan, state, beat, pid, note int
	// bare: the tier/model column leaves out the endpoint, so a note fits;
	// short: a run waiting for input says AskingShort, so a note fits.
	bare, short bool
}

// columns sizes the workers table for width and the workers
// shown: what a worker asks for (tier/model) first, then its agent and
// plan; the note gets the rest. When the widest note would be cut and
// dropping the endpoints' names from tier/model makes it whole, they go
// (the detail has them).
func (w *Pane) columns(width int) workerCols {
	rows, shown := w.rows, w.shown
	c := workerColumnsAt(width, rows, shown, false)
	note := 0
	for _, j := range shown {
		radar, text := w.note(&rows[j])
		note = max(note, kit.CellWidth(radar)+3+kit.CellWidth(text))
	}
	if c.note >= note {
		return c
	}
	// A run waiting for input says so in fewer words, then the endpoints
	// go, before a note is cut.
	short := shortAsking(c)
	if short.note >= note {
		return short
	}
	if bare := shortAsking(workerColumnsAt(width, rows, shown, true)); bare.note >= note {
		return bare
	}
	// A note is cut whatever goes: the state says it all.
	return c
}

// shortAsking is c with the state column as narrow as it is without a
// run waiting for input, which then shows AskingShort.
func shortAsking(c workerCols) workerCols {
	if c.state > stateWidth {
		c.note += c.state - stateWidth
		c.state, c.short = stateWidth, true
	}
	return c
}

// stateWidth is the state column's width but for a run waiting for input.
const stateWidth = 10

func workerColumnsAt(w int, rows []uictx.WorkerRow, shown []int, bare bool) workerCols {
	agent, what, plan, host := len("agent"), len("tier/model"), len("plan"), 0
	for _, j := range shown {
		st := &rows[j].St
		agent, what = max(agent, kit.CellWidth(st.AgentID)), max(what, kit.CellWidth(What(st, bare)))
		plan = max(plan, kit.CellWidth(kit.PlanSlug(st.Plan)))
		if rows[j].Pub != nil {
			host = len("host")
		}
	}
	for _, j := range shown {
		if host > 0 {
			host = max(host, kit.CellWidth(rows[j].St.Host))
		}
	}
	c := workerCols{state: stateWidth, beat: 5, pid: 7, bare: bare}
	for _, j := range shown {
		// A run waiting for input says so in full.
		if rows[j].St.Asking != nil {
			c.state = max(c.state, kit.CellWidth(Asking))
		}
	}
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

// HealthCell is a worker's state in words, with a symbol so no colour is
// needed to tell them apart.
func HealthCell(r *uictx.WorkerRow) (text string, ok bool) {
	switch r.Health {
	case look.Live:
		switch {
		case r.Child:
			return "○ starting", true
		case r.St.Paused != "":
			return "⏸ paused", true
		case r.St.Asking != nil:
			return Asking, true
		}
		return "● live", true
	case look.Stale:
		return "◌ stale", false
	case look.Dead:
		return "✗ dead", false
	}
	if r.St.ExitCode == nil {
		return "exited ?", true
	}
	return "exited " + kit.Itoa(*r.St.ExitCode), *r.St.ExitCode == 0 || *r.St.ExitCode == 1
}

// line is a worker's row, not yet highlighted (kit.Table highlights the selected one).
func (w *Pane) line(cm *uictx.Common, r *uictx.WorkerRow, c workerCols, selected bool) string {
	plain := cm.Plain
	var b strings.Builder
	b.WriteString(kit.Gutter(selected))
	mark := " "
	if i := slices.Index(w.marks, r.St.AgentID); i >= 0 && r.Pub == nil {
		mark = kit.Itoa(i + 1)
	}
	b.WriteString(mark + " ")
	b.WriteString(kit.Fit(termtext.Line(r.St.AgentID), c.agent) + " ")
	if c.host > 0 {
		b.WriteString(kit.Fit(termtext.Line(cmp.Or(r.St.Host, "—")), c.host) + " ")
	}
	b.WriteString(kit.Fit(termtext.Line(What(&r.St, c.bare)), c.tier) + " ")
	b.WriteString(kit.Fit(termtext.Line(kit.PlanSlug(r.St.Plan)), c.plan) + " ")
	state, ok := HealthCell(r)
	if state == Asking && c.short {
		state = AskingShort
	}
	cell := kit.Fit(state, c.state)
	if !plain {
		switch {
		case r.Health == look.Live && r.St.Paused != "":
			cell = cm.St.Warn.Render(cell)
		case r.Health == look.Live && r.St.Asking != nil:
			cell = cm.St.Info.Bold(true).Render(cell)
		case r.Health == look.Live:
			cell = cm.St.Good.Render(cell)
		case r.Health == look.Stale:
			cell = cm.St.Warn.Render(cell)
		case !ok:
			cell = cm.St.Bad.Render(cell)
		default:
			cell = cm.St.Dim.Render(cell)
		}
	}
	b.WriteString(cell + " ")
	beat := "—"
	switch last := lastSign(&r.St); {
	case r.Pub != nil:
		// Its own clock says nothing here: how long this machine has seen
		// its record unchanged.
		beat = kit.Coarse(cm.Now - float64(r.SeenAt.UnixNano())/1e9)
	case !last.IsZero() && !r.Child:
		beat = kit.Coarse(cm.Now - float64(last.UnixNano())/1e9)
	}
	b.WriteString(kit.Fit(beat, c.beat) + " ")
	pid := "—"
	if r.St.PID > 0 {
		pid = kit.Itoa(r.St.PID)
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
func (w *Pane) note(r *uictx.WorkerRow) (radar, note string) {
	note = r.St.Note
	switch {
	case r.Pub != nil && r.Pub.LastLine != "":
		note = strings.TrimPrefix(note+" › "+r.Pub.LastLine, " › ")
	case r.Pub == nil && !r.Local && r.St.Host != "":
		note = "on " + r.St.Host + ": " + note
	}
	if r.Health == look.Live && r.St.Spent != (ledger.Totals{}) {
		// What the run has cost so far comes before what it does.
		note = strings.TrimSuffix(r.St.Spent.String()+" · "+note, " · ")
	}
	return w.scopeWords(r), strings.TrimSuffix(note, ": ")
}

// scopeWords is what a running worker's row says of its scope and its
// overlaps with other running workers: "⚠ 2 out of scope", the scanner's
// own words ("in scope", "no scope check"), "overlaps w-2: a.go
// (conflict)"; "" for a worker not running or a scan not yet made.
func (w *Pane) scopeWords(r *uictx.WorkerRow) string {
	if r.Health == look.Exited || r.Child {
		return ""
	}
	var parts []string
	// An agent running as the operator, unconfined, is worth a glance.
	if r.St.Contained != "" && !strings.HasPrefix(r.St.Contained, "agents are contained") {
		parts = append(parts, "⚠ not contained")
	}
	switch n := len(r.St.Violations); {
	case n > 0:
		parts = append(parts, "⚠ "+kit.Itoa(n)+" out of scope")
	case r.St.Scope != "":
		parts = append(parts, r.St.Scope)
	}
	for _, o := range w.overlapsOf(r.St.AgentID) {
		parts = append(parts, overlapWords(o, r.St.AgentID))
	}
	return strings.Join(parts, " · ")
}

// scopeAlarm reports whether a row's scope words ask for a person: a
// violation, or a change that conflicts with another worker's.
func (w *Pane) scopeAlarm(r *uictx.WorkerRow) bool {
	if len(r.St.Violations) > 0 || strings.Contains(w.scopeWords(r), "⚠ not contained") {
		return true
	}
	for _, o := range w.overlapsOf(r.St.AgentID) {
		if o.Conflict {
			return true
		}
	}
	return false
}

// overlapsOf are the radar's overlaps agent is in.
func (w *Pane) overlapsOf(agent string) []look.Overlap {
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

// What is how a worker asks for plans: endpoint, tier, model.
func What(st *look.State, bare bool) string {
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

func matches(r *uictx.WorkerRow, f string) bool {
	st := &r.St
	state, _ := HealthCell(r)
	return kit.AnyContains(f, st.AgentID, st.Endpoint, st.Tier, st.Model, st.Plan, st.Note, st.Host, state, st.Paused)
}

// toggleMark marks the selected worker r for the logs, or unmarks it,
// and asks the root to move on to the next.
func (w *Pane) toggleMark(r *uictx.WorkerRow) tea.Msg {
	if r == nil {
		return nil
	}
	if r.Pub != nil {
		return uictx.Status("✗ "+elsewhereLog(r), true)
	}
	if i := slices.Index(w.marks, r.St.AgentID); i >= 0 {
		w.marks = slices.Delete(w.marks, i, i+1)
	} else if len(w.marks) >= uictx.MaxLogPanes {
		return uictx.Status("✗ logs show at most four workers side by side; space on a marked one unmarks it", true)
	} else {
		w.marks = append(w.marks, r.St.AgentID)
	}
	w.Invalidate()
	return uictx.MoveReq(1)
}

// open shows the worker r: its state file, its note and the end of its
// log; the radar's overlaps are the ones seen when it opens.
func (w *Pane) open(pc *uictx.Ctx, r *uictx.WorkerRow) tea.Msg {
	if r == nil {
		return nil
	}
	if r.Pub != nil {
		// Read again and its log fetched through the claims backend,
		// which only the root holds.
		return uictx.PublishedReq{P: *r.Pub, SeenAt: r.SeenAt}
	}
	agent, project := r.St.AgentID, pc.Opt.Tree.Project
	overlaps := w.overlapsOf(agent)
	return uictx.Detail("worker:"+agent, "worker · "+agent, func() func(*uictx.Ctx) []string {
		wd := look.ReadWorkerDetail(project, agent)
		return func(pc *uictx.Ctx) []string { return Detail(pc.Common, wd, overlaps) }
	})
}

// elsewhereLog says where the log of r, a worker on another machine, is:
// its log is that machine's file, not this one's.
func elsewhereLog(r *uictx.WorkerRow) string {
	where := termtext.Line(r.St.Host) + ":" + termtext.Line(cmp.Or(r.Pub.LogPath, look.LogDir+"/"+tree.SafeID(r.St.AgentID)+".log"))
	return "logs: " + termtext.Line(r.St.AgentID) + " runs on " + termtext.Line(r.St.Host) + "; its log is " + where + " (enter shows its last line)"
}

// diff is `d`: the worker r's worktree, else its plan.
func (w *Pane) diff(pc *uictx.Ctx, r *uictx.WorkerRow) tea.Msg {
	if r == nil {
		return nil
	}
	project, st := pc.Opt.Tree.Project, r.St
	return uictx.Diff("worker "+termtext.Line(st.AgentID), "worker\x00"+st.AgentID, func() (look.Diff, error) {
		return look.DiffOfWorker(project, st)
	})
}

// askStop confirms stopping the worker r.
func (w *Pane) askStop(pc *uictx.Ctx, r *uictx.WorkerRow) tea.Msg {
	if ok, _ := canStop(r); !ok {
		return nil
	}
	if r.Pub != nil {
		return w.askStopRemote(pc, r)
	}
	st := *r
	who := termtext.Line(st.St.AgentID)
	then := "it stops its agent and exits."
	if st.St.Plan != "" {
		then = "it stops its agent, releases " + termtext.Line(kit.PlanSlug(st.St.Plan)) + " back to its lane, and exits."
	}
	body := []string{"Send SIGTERM to " + who + " (pid " + kit.Itoa(st.St.PID) + ") and its process group; " + then}
	if st.Health == look.Stale {
		body = append(body, "⚠ Its last heartbeat was "+kit.Coarse(pc.Now-float64(lastSign(&st.St).UnixNano())/1e9)+" ago; it may be stuck.")
	}
	project, t := pc.Opt.Tree.Project, pc.Opt.Tree
	// No lease to look at again: stopCmd checks the state file instead.
	return uictx.QuestionReq{Q: uictx.Question{
		Title: "Stop " + who, Body: body, Verb: "stop",
		Do: func(model.Lane, string) tea.Cmd { return verbs.StopCmd(project, t, st.St, st.Child) },
	}}
}

// askStopRemote confirms asking r, a worker on another machine, to stop
// through the record it publishes: no signal crosses machines.
func (w *Pane) askStopRemote(pc *uictx.Ctx, r *uictx.WorkerRow) tea.Msg {
	if pc.Claims == nil {
		return nil
	}
	who, host := termtext.Line(r.St.AgentID), termtext.Line(r.St.Host)
	then := "it stops its agent and exits."
	if r.St.Plan != "" {
		then = "it stops its agent, gives " + termtext.Line(kit.PlanSlug(r.St.Plan)) + " back, and exits."
	}
	body := []string{"Ask " + who + " on " + host + " to stop, through the claims backend: at its next heartbeat " + then}
	if r.Health == look.Stale {
		body = append(body, "⚠ Its record has not changed for "+kit.Coarse(pc.Now-kit.UnixOf(r.SeenAt))+"; it may not hear the request.")
	}
	// The root asks through its claims backend.
	return uictx.RemoteStopReq{St: r.St, Q: uictx.Question{
		Title: "Stop " + who + " on " + host, Body: body, Verb: "stop",
	}}
}
