package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"fleetwatch/model"
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
