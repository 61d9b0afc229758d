package ui

import (
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"fleetwatch/internal/termtext"
	"fleetwatch/model"
	"fleetwatch/planfs"
	"fleetwatch/workers"
)

type pane int

const (
	plansPane pane = iota
	leasesPane
	worktreesPane
	workersPane
	eventsPane
	mergePane
	inboxPane
	paneCount
)

// paneModel is one pane of the cockpit: it is sized, derives its rows
// from the data, answers the keys that are its own, and draws itself. What
// it offers the key map is its table's selection.
type paneModel interface {
	setSize(w, h int)
	rebuild(m *Model)
	// update answers a key the pane owns; handled is false for the rest.
	update(m *Model, msg tea.KeyMsg) (cmd tea.Cmd, handled bool)
	view(m *Model, h int) []string
	list() *table
	// selected is what the cursor is on, for the key map and the verbs.
	selected() selection
	// syncKeys enables the pane's own keys for the selection, m's.
	syncKeys(m *Model, set setKey)
	// filterOf is the pane's own filter (filter.go).
	filterOf() *paneFilter
}

// selection is what a pane offers the key map: the plan, lease or worker
// under the cursor; the rest are nil.
type selection struct {
	rel    string
	row    *model.BoardRow
	lease  *model.Lease
	worker *workerRow
}

// paneSpecs is the one list of panes: its order is the tab order and the
// number keys, its names the tabs. A new pane is one line here and its
// sub-model.
var paneSpecs = [paneCount]struct {
	name, short string // short is the name on narrow terminals
	of          func(m *Model) paneModel
}{
	{"Plans", "Plans", func(m *Model) paneModel { return &m.plans }},
	{"Leases", "Leases", func(m *Model) paneModel { return &m.leases }},
	{"Worktrees", "Trees", func(m *Model) paneModel { return &m.trees }},
	{"Workers", "Workers", func(m *Model) paneModel { return &m.wrk }},
	{"Events", "Events", func(m *Model) paneModel { return &m.events }},
	{"Merge", "Merge", func(m *Model) paneModel { return &m.merge }},
	{"Inbox", "Inbox", func(m *Model) paneModel { return &m.inbox }},
}

func (m *Model) paneOf(p pane) paneModel { return paneSpecs[p].of(m) }

// current is the shown pane's table.
func (m *Model) current() *table { return m.paneOf(m.pane).list() }

func (t *table) setSize(w, h int) {
	t.width = w
	t.setHeight(h)
}

func (t *table) list() *table { return t }

// planList is the Plans pane: one lane's plans, the filter over them (in
// every lane at once), and the selected plan's preview.
type planList struct {
	table
	paneFilter
	rows     []*model.BoardRow
	cols     planCols
	lane     model.Lane
	lanePick map[model.Lane]string // the plan last selected in each lane
	matched  map[model.Lane]int    // each lane's matches while a filter applies
	skipW    map[string]int        // how wide each plan's skip reason is (columns.go)
	measured measuredPlans         // the last measurement, for the rows it was made of
	pv       preview
	// want is a plan to select once a scan shows it: one just written.
	want string
}

func (p *planList) rebuild(m *Model) {
	p.rows = p.rows[:0]
	clear(p.matched)
	if m.d != nil {
		p.rows = m.filterPlans(p.rows, p.lane, p.needle(), p.matched)
	}
	p.cols = planColumns(p.width, p.wantFor(m), p.lane.Ready())
	p.cols.parked = p.lane.Parked()
	keys := make([]string, len(p.rows))
	for i, r := range p.rows {
		keys[i] = r.Plan.Rel
	}
	c := p.cols
	p.set(keys, func(m *Model, i int, sel bool) string { return m.planLine(m.plans.rows[i], c, sel) })
	if p.want != "" && m.d != nil && m.d.rels[p.want] {
		p.goTo(p.want) // once: a filter hiding it leaves the cursor be
		p.want = ""
	}
}

func (p *planList) selected() selection {
	if p.cursor >= len(p.rows) {
		return selection{}
	}
	r := p.rows[p.cursor]
	return selection{rel: r.Plan.Rel, row: r, lease: r.Lease}
}

// update answers the Plans pane's own keys: lanes, the filter, the
// preview, and the verbs on the selected plan.
func (p *planList) update(m *Model, msg tea.KeyMsg) (tea.Cmd, bool) {
	k := &m.keys.Plans
	switch {
	case key.Matches(msg, k.PrevLane):
		return m.switchLane(-1), true
	case key.Matches(msg, k.NextLane):
		return m.switchLane(1), true
	case key.Matches(msg, k.PreviewDown):
		p.pv.vp.HalfPageDown()
	case key.Matches(msg, k.PreviewUp):
		p.pv.vp.HalfPageUp()
	case key.Matches(msg, k.Preview):
		m.stack.push(&reader{})
		m.layout()
		return m.schedulePreview(), true
	case key.Matches(msg, k.Diff):
		return m.diffPlan(), true
	case key.Matches(msg, k.New):
		return m.askNewPlan(), true
	case key.Matches(msg, k.Edit):
		return m.askEdit(), true
	default:
		if cmd, ok := m.verbKey(msg); ok {
			return cmd, true
		}
		return m.candidateKey(msg)
	}
	return nil, true
}

func (p *planList) syncKeys(m *Model, set setKey) {
	k, onPlans := &m.keys.Plans, m.pane == plansPane
	rel, row, _ := m.target()
	lane := model.Rel(rel).Lane()
	onPlan := row != nil
	// Which lane each verb takes a plan from is the verb table's word.
	takes := func(v model.Verb) bool { return onPlan && model.RuleOf(v).Takes(lane) }
	set(&k.Promote, takes(model.Promote), "promote: select a draft")
	set(&k.Park, takes(model.Park), "park: select a ready or in-progress plan")
	set(&k.Return, takes(model.Return), "return: select a parked or in-progress plan")
	set(&k.Complete, takes(model.Complete), "complete: select an in-progress plan")
	release, recover := m.releaseRecover()
	set(&k.Release, onPlans && release, "release: select a plan with a lease (u returns one without)")
	set(&k.Recover, onPlans && recover, "recover: select an expired, unreadable or left-over lease")
	set(&k.Preview, onPlan, "preview: select a plan")
	set(&k.Diff, onPlan, "diff: select a plan, a worktree or a worker")
	inline := onPlan && m.previewShown() && !m.reading()
	set(&k.PreviewDown, inline, "preview: it shows below the plans on wide terminals; enter opens it")
	set(&k.PreviewUp, inline, "preview: it shows below the plans on wide terminals; enter opens it")
	set(&k.PrevLane, onPlans, "lanes: switch to the plans pane (1)")
	set(&k.NextLane, onPlans, "lanes: switch to the plans pane (1)")
	set(&k.New, onPlans && m.d != nil, "new plan: switch to the plans pane (1)")
	set(&k.Edit, onPlans && onPlan, "edit: select a plan")
	if onPlans {
		// Synced last here: A and X are the selected plan's candidate's,
		// not the inbox's.
		m.candidateKeys(set)
	}
}

func (p *planList) view(m *Model, h int) []string { return m.plansView(h) }

// workerList is the Workers pane: the state files as last read, the
// workers this UI started, and the ones marked for logs (agent ids, in
// pane order).
type workerList struct {
	table
	paneFilter
	states   []workers.State // the last reading of the state files
	rows     []workerRow
	problems []string
	children []*workers.Child
	// overlaps is the radar's last look; radarAt when it was asked for,
	// radarDue that a reading went without it since.
	overlaps []workers.Overlap
	radarAt  time.Time
	radarDue bool
	marks    []string
	shown    []int // the rows the filter lets through
	cols     workerCols
}

func (w *workerList) rebuild(m *Model) {
	all := make([]string, len(w.rows))
	for i := range w.rows {
		all[i] = w.rows[i].st.AgentID
	}
	// Marks follow their workers; one that is gone loses its mark.
	w.marks = slices.DeleteFunc(w.marks, func(a string) bool { return !slices.Contains(all, a) })
	f := w.needle()
	w.shown = w.shown[:0]
	keys := make([]string, 0, len(w.rows))
	for i := range w.rows {
		if r := &w.rows[i]; f == "" || r.matches(f) {
			w.shown = append(w.shown, i)
			keys = append(keys, all[i])
		}
	}
	w.cols = m.workerColumns(w.width, w.rows, w.shown)
	c := w.cols
	w.set(keys, func(m *Model, i int, sel bool) string { return m.workerLine(&m.wrk.rows[m.wrk.shown[i]], c, sel) })
}

func (w *workerList) selected() selection {
	if w.cursor >= len(w.shown) {
		return selection{}
	}
	return selection{worker: &w.rows[w.shown[w.cursor]]}
}

func (w *workerList) syncKeys(m *Model, set setKey) {
	k := &m.keys.Workers
	r := m.selectedWorker()
	ok, why := canStop(r)
	set(&k.Stop, ok, why)
	set(&k.Mark, r != nil, "mark: select a worker in the workers pane (4)")
	set(&k.Logs, r != nil, "logs: select a worker in the workers pane (4)")
	set(&k.Diff, r != nil && (r.st.Worktree != "" || r.st.Plan != ""), "diff: select a worker with a worktree or a plan")
	set(&k.Open, r != nil && m.pane == workersPane, "open: select a worker in the workers pane (4)")
}

func (w *workerList) update(m *Model, msg tea.KeyMsg) (tea.Cmd, bool) {
	k := &m.keys.Workers
	switch {
	case key.Matches(msg, k.Mark):
		// Before PageDown, which space also is.
		m.toggleMark()
	case key.Matches(msg, k.Stop):
		m.askStop()
	case key.Matches(msg, k.Logs):
		return m.openLogs(), true
	case key.Matches(msg, k.Diff):
		return m.diffWorker(), true
	case key.Matches(msg, k.Open):
		return m.openWorker(), true
	default:
		return nil, false
	}
	return nil, true
}

func (w *workerList) view(m *Model, h int) []string {
	empty := "no workers: s spawns one; workers that cron, systemd or anyone starts show here too"
	if m.opt.Self == "" || m.opt.ReadOnly {
		empty = "no workers: the ones cron, systemd or anyone starts show here"
	}
	if len(w.problems) > 0 && len(w.rows) == 0 {
		empty = "⚠ " + termtext.Line(w.problems[0])
	}
	return m.tableBox(m.filterTitle("Workers", &w.paneFilter), w.cols.header(), &w.table, h, m.emptyText(&w.paneFilter, empty))
}

// eventList is the Events pane: scan warnings, then the event log newest
// first.
type eventList struct {
	table
	paneFilter
	rows []eventRow
	cols eventCols
}

// eventRow is a line of the Events pane: a scan warning or an event.
type eventRow struct {
	warn  *model.Warning
	event *planfs.Event
}

func (e *eventList) rebuild(m *Model) {
	if m.d == nil {
		return
	}
	e.rows = e.rows[:0]
	if m.d.eventsErr != nil {
		// The project is known: the reason needs the room.
		why := strings.ReplaceAll(m.d.eventsErr.Error(), m.opt.Tree.Project+string(filepath.Separator), "")
		e.rows = append(e.rows, eventRow{warn: &model.Warning{File: planfs.EventsFile, Message: "cannot read the event log: " + why}})
	}
	for i := range m.d.board.Warnings {
		e.rows = append(e.rows, eventRow{warn: &m.d.board.Warnings[i]})
	}
	for _, p := range m.wrk.problems {
		e.rows = append(e.rows, eventRow{warn: &model.Warning{File: "worker state", Message: "unreadable: " + p}})
	}
	for i := range m.d.events {
		e.rows = append(e.rows, eventRow{event: &m.d.events[i]})
	}
	if f := e.needle(); f != "" {
		e.rows = slices.DeleteFunc(e.rows, func(r eventRow) bool { return !r.matches(f) })
	}
	keys := make([]string, len(e.rows))
	for i, r := range e.rows {
		if r.warn != nil {
			keys[i] = "w\x00" + r.warn.File + "\x00" + r.warn.Message
		} else {
			keys[i] = r.event.TS + "\x00" + r.event.Event + "\x00" + r.event.Slug
		}
	}
	e.cols = eventColumns(e.width, e.rows)
	c := e.cols
	e.set(keys, func(m *Model, i int, sel bool) string {
		if w := m.events.rows[i].warn; w != nil {
			return m.warningLine(w, sel)
		}
		return m.eventLine(m.events.rows[i].event, c, sel)
	})
}

func (e *eventList) selected() selection { return selection{} }

func (e *eventList) syncKeys(m *Model, set setKey) {
	set(&m.keys.Events.Open, m.pane == eventsPane && e.cursor < len(e.rows), "open: select an event in the events pane (5)")
}

func (e *eventList) update(m *Model, msg tea.KeyMsg) (tea.Cmd, bool) {
	if key.Matches(msg, m.keys.Events.Open) {
		return m.openEvent(), true
	}
	return nil, false
}

func (e *eventList) view(m *Model, h int) []string {
	return m.tableBox(m.filterTitle("Events", &e.paneFilter), e.cols.header(), &e.table, h, m.emptyText(&e.paneFilter, "no events yet in .plans/logs/events.jsonl"))
}
