// Package ui is fleetwatch's operator cockpit: a Bubble Tea program showing
// the lanes with each tier's pick order, dependencies, leases, worktrees,
// workers (spawned, stopped, their logs side by side) and the event log,
// refreshed by file watchers, and acting through the engine's verbs. It
// reaches the disk and processes only through planfs and workers.
package ui

import (
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"fleetwatch/internal/termtext"
	"fleetwatch/model"
	"fleetwatch/planfs"
	"fleetwatch/workers"
)

// Options are the facts the program needs, settled before it starts.
type Options struct {
	Tree  *planfs.Tree
	Agent string  // who the operator acts as in the event log and leases
	TTL   float64 // lease lifetime for recover, seconds
	// Glamour is the preview's glamour style: "dark", "light" or "notty".
	Glamour string
	// Renderer decides the colour profile; one per SSH session.
	Renderer *lipgloss.Renderer
	// NoWatch skips the file watchers; tests send changes themselves.
	NoWatch bool
	// Self is the fleetwatch binary that spawned workers run (`Self
	// work-once ...`); without it, s explains that it cannot spawn.
	Self string
}

type pane int

const (
	plansPane pane = iota
	leasesPane
	worktreesPane
	workersPane
	eventsPane
	paneCount
)

var paneNames = [...]string{"Plans", "Leases", "Worktrees", "Workers", "Events"}

// frameRate caps how often the screen is redrawn.
const frameRate = 30

// Debounce is how long the watcher waits for a burst of changes to end.
const Debounce = 50 * time.Millisecond

// Model is the whole program state. Update changes it; View only reads it.
type Model struct {
	opt   Options
	keys  KeyMap
	st    Styles
	help  help.Model
	plain bool   // no colour at all: skip styling work
	inkOn string // the escape code that sets the Text colour
	why   map[string]string

	width, height int
	cols          int // the body's width: one column is kept as a left margin
	wide          bool
	tw            [paneCount]int // each pane's table width

	d               *data
	loadErr         error
	loading, reload bool
	// treesLoading and treesAgain do for worktrees what loading and
	// reload do for the tree.
	treesLoading, treesAgain bool
	watcher                  *planfs.Watcher
	states                   *workers.StateWatcher
	problem                  string // the tree vanished or cannot be watched
	ticking                  bool
	now                      float64

	pane     pane
	lane     model.Lane
	lanePick map[model.Lane]string

	plans, leases, trees, wrk, events table
	planRows                          []*model.BoardRow
	leaseRows                         []model.Lease
	treeRows                          []workers.WorktreeState
	treeErr                           error
	eventRows                         []eventRow
	pcols                             planCols

	// The Workers pane: the state files as last read, the workers this UI
	// started, and the ones marked for logs (agent ids, in pane order).
	wrkStates            []workers.State // the last reading of the state files
	wrkRows              []workerRow
	wrkProblems          []string
	wrkLoading, wrkAgain bool
	children             []*workers.Child
	marks                []string

	form    *spawnForm
	logs    *logView
	logGen  int
	formGen int
	// staticCursors keeps text fields from blinking (tests).
	staticCursors bool

	pv   preview
	full bool

	filter    textinput.Model
	filtering bool

	dlg       *dialog
	status    string
	statusErr bool
	showHelp  bool
}

// eventRow is a line of the Events pane: a scan warning or an event.
type eventRow struct {
	warn  *model.Warning
	event *planfs.Event
}

// New builds the program's model and starts the file watcher.
func New(opt Options) Model {
	if opt.Renderer == nil {
		opt.Renderer = lipgloss.DefaultRenderer()
	}
	if opt.Glamour == "" {
		opt.Glamour = "notty"
	}
	if opt.TTL <= 0 {
		opt.TTL = planfs.DefaultTTL
	}
	m := Model{
		opt:          opt,
		keys:         DefaultKeyMap(),
		st:           NewStyles(opt.Renderer),
		help:         help.New(),
		plain:        opt.Renderer.ColorProfile() == termenv.Ascii,
		lane:         model.Bugs,
		loading:      true, // Init starts the first scan and the first worktree look
		treesLoading: true,
		wrkLoading:   true, // and the first reading of the state files
		lanePick:     map[model.Lane]string{},
		why:          map[string]string{},
		pv:           preview{vp: viewport.New(0, 0)},
	}
	if on, _, ok := strings.Cut(m.st.Text.Render("x"), "x"); ok && !m.plain {
		m.inkOn = on
	}
	m.filter = textinput.New()
	m.filter.Prompt = "/ "
	m.filter.Placeholder = "slug, title, model or agent"
	if !opt.NoWatch {
		w, err := opt.Tree.Watch(Debounce)
		if err != nil {
			m.problem = "not watching for changes: " + err.Error()
		} else {
			m.watcher = w
		}
		sw, err := workers.WatchStates(opt.Tree.Project, Debounce)
		if err != nil {
			m.problem = "not watching workers: " + err.Error()
		} else {
			m.states = sw
		}
	}
	m.syncKeys()
	return m
}

// Init loads the tree and starts waiting for changes.
func (m Model) Init() tea.Cmd {
	cmds := []tea.Cmd{loadCmd(m.opt.Tree), worktreesCmd(m.opt.Tree.Project), workersCmd(m.opt.Tree.Project)}
	if m.watcher != nil {
		cmds = append(cmds, waitForChangeCmd(m.watcher.Changes()))
	}
	if m.states != nil {
		cmds = append(cmds, waitForStatesCmd(m.states.Changes()))
	}
	return tea.Batch(cmds...)
}

// Close stops the watchers and the logs being followed.
func (m *Model) Close() {
	if m.watcher != nil {
		_ = m.watcher.Close()
	}
	if m.states != nil {
		_ = m.states.Close()
	}
	if m.logs != nil {
		for _, t := range m.logs.tails() {
			_ = t.Close()
		}
	}
}

// Update applies one message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	return m, cmd
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.layout()
		if m.logs != nil {
			for i := range m.logs.panes {
				m.clampLog(i)
			}
		}
		return m.schedulePreview()
	case loadedMsg:
		return m.loaded(msg)
	case worktreesMsg:
		m.treeRows, m.treeErr = msg.states, msg.err
		m.rebuildTrees()
		m.treesLoading = false
		if m.treesAgain {
			m.treesAgain = false
			return m.requestTrees()
		}
		return nil
	case changeMsg:
		var next tea.Cmd
		if m.watcher != nil {
			next = waitForChangeCmd(m.watcher.Changes())
		}
		if msg.Err != nil {
			// The watcher may have lost events (a full queue): look again.
			m.problem = msg.Err.Error()
		} else {
			m.problem = ""
		}
		return tea.Batch(next, m.requestLoad(), m.worktreesIfShown())
	case stateChangeMsg:
		var next tea.Cmd
		if m.states != nil {
			next = waitForStatesCmd(m.states.Changes())
		}
		return tea.Batch(next, m.requestWorkers())
	case workersMsg:
		return m.workersLoaded(msg)
	case spawnFormMsg:
		return m.openForm(msg)
	case spawnedMsg:
		return m.spawned(msg)
	case logOpenedMsg:
		return m.logOpened(msg)
	case logLinesMsg:
		return m.logLines(msg)
	case tickMsg:
		return m.tick()
	case previewDueMsg:
		if msg.seq != m.pv.seq {
			return nil
		}
		if r := m.selectedPlan(); r != nil {
			return renderPreviewCmd(m.opt.Tree, r.Plan.Rel, m.previewWant(r), m.opt.Glamour, m.previewWidth(), msg.seq)
		}
		return nil
	case previewMsg:
		if msg.seq != m.pv.seq {
			return nil
		}
		m.pv.key = msg.key
		if msg.err != nil {
			m.pv.vp.SetContent(msg.err.Error())
		} else {
			m.pv.vp.SetContent(msg.text)
		}
		return nil
	case actionMsg:
		if msg.err != nil {
			m.setStatus("✗ "+msg.err.Error(), true)
		} else {
			m.setStatus("✓ "+msg.done, false)
		}
		return tea.Batch(m.requestLoad(), m.worktreesIfShown(), m.requestWorkers())
	case tea.KeyMsg:
		return m.key(msg)
	}
	if m.form != nil {
		return m.form.updateInput(msg)
	}
	if m.filtering {
		var cmd tea.Cmd
		m.filter, cmd = m.filter.Update(msg)
		return cmd
	}
	return nil
}

func (m *Model) setStatus(s string, isErr bool) {
	m.status, m.statusErr = termtext.Line(s), isErr
}

// requestLoad starts a scan, or asks for one more when a scan is running,
// so bursts of changes never queue scans.
func (m *Model) requestLoad() tea.Cmd {
	if m.loading {
		m.reload = true
		return nil
	}
	m.loading = true
	return loadCmd(m.opt.Tree)
}

func (m *Model) worktreesIfShown() tea.Cmd {
	if m.pane == worktreesPane {
		return m.requestTrees()
	}
	return nil
}

// requestTrees asks git about the worktrees, one request at a time like
// requestLoad: each one runs git twice per worktree.
func (m *Model) requestTrees() tea.Cmd {
	if m.treesLoading {
		m.treesAgain = true
		return nil
	}
	m.treesLoading = true
	return worktreesCmd(m.opt.Tree.Project)
}

func (m *Model) loaded(msg loadedMsg) tea.Cmd {
	m.loading = false
	var cmds []tea.Cmd
	if m.reload {
		m.reload = false
		cmds = append(cmds, m.requestLoad())
	}
	if msg.err != nil {
		m.loadErr = msg.err
		return tea.Batch(cmds...)
	}
	m.loadErr = nil
	m.d, m.now = msg.d, msg.d.now
	m.rebuild()
	if d := m.dlg; d != nil && d.rel != "" {
		leaseAt := func(rel string) *model.Lease {
			for i := range m.d.board.Leases {
				if m.d.board.Leases[i].Rel == rel {
					return &m.d.board.Leases[i]
				}
			}
			return nil
		}
		if leasePrint(leaseAt(d.rel)) != d.seen || m.planExists(d.rel) != d.existed {
			// Named from this scan: where the plan is now and who holds
			// it there (a claim moves it to in-progress/).
			cur := placeIn(m.d.rels, d.rel)
			m.dlg = nil
			m.setStatus("✗ "+slugOf(d.rel)+" changed while you decided ("+changedWords(d.rel, cur, leaseAt(cur))+"); look again", true)
		}
	}
	if len(m.d.board.Leases) > 0 && !m.ticking {
		m.ticking = true
		cmds = append(cmds, tickCmd())
	}
	cmds = append(cmds, m.schedulePreview())
	return tea.Batch(cmds...)
}

// tick moves the countdowns and heartbeat ages on; when a lease runs out,
// eligibility changes, so the board is judged again; running workers are
// judged again too (a heartbeat grows stale, a process dies).
func (m *Model) tick() tea.Cmd {
	leases := m.d != nil && len(m.d.board.Leases) > 0
	running := m.workersRunning()
	if !leases && !running {
		m.ticking = false
		return nil
	}
	prev := m.now
	m.now = m.opt.Tree.NowSeconds()
	m.plans.invalidate()
	m.leases.invalidate()
	m.wrk.invalidate()
	m.events.invalidate()
	var cmds []tea.Cmd
	if running {
		m.wrkRows = judgeWorkers(m.wrkStates, m.children, m.opt.Tree.Now())
		m.rebuildWorkers()
		m.syncKeys()
	}
	for i := 0; leases && i < len(m.d.board.Leases); i++ {
		if l := &m.d.board.Leases[i]; l.Corrupt == "" && l.ExpiresAt > prev && l.ExpiresAt <= m.now {
			cmds = append(cmds, m.requestLoad())
			break
		}
	}
	return tea.Batch(append(cmds, tickCmd())...)
}

// layout sizes every pane for the terminal; rows render again when seen.
func (m *Model) layout() {
	m.cols = max(1, m.width-1)
	m.wide = m.width >= 100
	bodyH := max(1, m.height-2)
	if m.wide {
		m.tw[plansPane] = m.cols - laneBoxWidth - 2
		for p := leasesPane; p <= eventsPane; p++ {
			m.tw[p] = m.cols - 2
		}
	} else {
		for p := range m.tw {
			m.tw[p] = m.cols
		}
	}
	th, ph := m.plansSplit(bodyH)
	if m.wide {
		m.plans.setHeight(th - 3)
		m.pv.vp.Width, m.pv.vp.Height = m.tw[plansPane]-2, max(1, ph-2)
	} else {
		m.plans.setHeight(bodyH - 2)
	}
	rows := bodyH - 1
	if m.wide {
		rows = bodyH - 3
	}
	m.leases.setHeight(rows)
	m.trees.setHeight(rows)
	m.wrk.setHeight(rows)
	m.events.setHeight(rows)
	if m.full {
		m.pv.vp.Width, m.pv.vp.Height = m.cols-2, bodyH-1
	}
	m.help.Width = m.width
	m.rebuild()
}

const laneBoxWidth = 22

// plansSplit divides the wide plans pane between the table and the preview.
func (m *Model) plansSplit(bodyH int) (table, prev int) {
	if !m.wide || bodyH < 20 {
		return bodyH, 0
	}
	table = max(8, bodyH*11/20)
	return table, bodyH - table
}

func (m *Model) tableWidth() int { return m.tw[m.pane] }

// rebuild derives every pane's rows from the latest data.
func (m *Model) rebuild() {
	m.rebuildPlans()
	if m.d != nil {
		m.leaseRows = sortLeases(m.d.board.Leases, m.d.now)
		keys := make([]string, len(m.leaseRows))
		for i := range m.leaseRows {
			keys[i] = m.leaseRows[i].File
		}
		c := leaseColumns(m.tw[leasesPane])
		m.leases.set(keys, func(m *Model, i int, sel bool) string { return m.leaseLine(&m.leaseRows[i], c, sel) })
		m.eventRows = m.eventRows[:0]
		if m.d.eventsErr != nil {
			m.eventRows = append(m.eventRows, eventRow{warn: &model.Warning{File: planfs.EventsFile, Message: "cannot read the event log: " + m.d.eventsErr.Error()}})
		}
		for i := range m.d.board.Warnings {
			m.eventRows = append(m.eventRows, eventRow{warn: &m.d.board.Warnings[i]})
		}
		for _, p := range m.wrkProblems {
			m.eventRows = append(m.eventRows, eventRow{warn: &model.Warning{File: "worker state", Message: "unreadable: " + p}})
		}
		for i := range m.d.events {
			m.eventRows = append(m.eventRows, eventRow{event: &m.d.events[i]})
		}
		ekeys := make([]string, len(m.eventRows))
		for i, r := range m.eventRows {
			if r.warn != nil {
				ekeys[i] = "w\x00" + r.warn.File + "\x00" + r.warn.Message
			} else {
				ekeys[i] = r.event.TS + "\x00" + r.event.Event + "\x00" + r.event.Slug
			}
		}
		ec := eventColumns(m.tw[eventsPane])
		m.events.set(ekeys, func(m *Model, i int, sel bool) string {
			if w := m.eventRows[i].warn; w != nil {
				return m.warningLine(w, sel)
			}
			return m.eventLine(m.eventRows[i].event, ec, sel)
		})
	}
	m.rebuildTrees()
	m.rebuildWorkers()
	m.syncKeys()
}

func (m *Model) rebuildPlans() {
	m.pcols = planColumns(m.tw[plansPane])
	if m.pcols.who == 0 && !m.lane.Ready() {
		// Narrow: outside the ready lanes who holds a plan matters more
		// than its dependencies.
		m.pcols.who, m.pcols.deps = m.pcols.deps-1, 0
	}
	m.planRows = m.planRows[:0]
	if m.d != nil {
		f := strings.ToLower(strings.TrimSpace(m.filter.Value()))
		rows := m.d.board.Lane(m.lane)
		for i := range rows {
			if matches(&rows[i], f) {
				m.planRows = append(m.planRows, &rows[i])
			}
		}
	}
	keys := make([]string, len(m.planRows))
	for i, r := range m.planRows {
		keys[i] = r.Plan.Rel
	}
	c := m.pcols
	m.plans.set(keys, func(m *Model, i int, sel bool) string { return m.planLine(m.planRows[i], c, sel) })
}

func (m *Model) rebuildTrees() {
	keys := make([]string, len(m.treeRows))
	for i := range m.treeRows {
		keys[i] = m.treeRows[i].AgentID
	}
	c := treeColumns(m.tw[worktreesPane])
	m.trees.set(keys, func(m *Model, i int, sel bool) string { return m.treeLine(&m.treeRows[i], c, sel) })
}

func (m *Model) selectedPlan() *model.BoardRow {
	if m.pane != plansPane || m.plans.cursor >= len(m.planRows) {
		return nil
	}
	return m.planRows[m.plans.cursor]
}

// target is the plan an action applies to and its lease: the selected plan,
// or the selected lease's plan.
func (m *Model) target() (rel string, row *model.BoardRow, lease *model.Lease) {
	switch m.pane {
	case plansPane:
		if r := m.selectedPlan(); r != nil {
			return r.Plan.Rel, r, r.Lease
		}
	case leasesPane:
		if m.leases.cursor < len(m.leaseRows) {
			l := &m.leaseRows[m.leases.cursor]
			return l.Rel, nil, l
		}
	}
	return "", nil, nil
}

// syncKeys enables the actions that apply to the selection and remembers
// why the others do not.
func (m *Model) syncKeys() {
	rel, row, lease := m.target()
	lane, _, _ := planfs.SplitRel(rel)
	onPlan := row != nil
	set := func(b *key.Binding, ok bool, why string) {
		b.SetEnabled(ok)
		for _, k := range b.Keys() {
			m.why[k] = why
		}
	}
	set(&m.keys.Promote, onPlan && lane == model.Drafts, "promote: select a draft")
	set(&m.keys.Park, onPlan && (lane.Ready() || lane == model.InProgress), "park: select a ready or in-progress plan")
	set(&m.keys.Return, onPlan && (lane.Parked() || lane == model.InProgress), "return: select a parked or in-progress plan")
	set(&m.keys.Complete, onPlan && lane == model.InProgress, "complete: select an in-progress plan")
	exists := rel != "" && m.planExists(rel)
	set(&m.keys.Release, exists && lane == model.InProgress && lease != nil,
		"release: select a plan with a lease (u returns one without)")
	set(&m.keys.Recover, lease != nil && (!lease.Active(m.now) || !exists), "recover: select an expired, unreadable or left-over lease")
	set(&m.keys.Filter, m.pane == plansPane, "filter: switch to the plans pane (1)")
	set(&m.keys.Preview, onPlan, "preview: select a plan")
	inline := onPlan && m.previewShown() && !m.full
	set(&m.keys.PreviewDown, inline, "preview: it shows below the plans on wide terminals; enter opens it")
	set(&m.keys.PreviewUp, inline, "preview: it shows below the plans on wide terminals; enter opens it")
	set(&m.keys.PrevLane, m.pane == plansPane, "lanes: switch to the plans pane (1)")
	set(&m.keys.NextLane, m.pane == plansPane, "lanes: switch to the plans pane (1)")
	set(&m.keys.Spawn, m.opt.Self != "", "spawn: this UI does not know its own binary, so it cannot start workers")
	ok, why := canStop(m.selectedWorker())
	set(&m.keys.Stop, ok, why)
	onWorker := m.selectedWorker() != nil
	set(&m.keys.Mark, onWorker, "mark: select a worker in the workers pane (4)")
	set(&m.keys.Logs, onWorker, "logs: select a worker in the workers pane (4)")
}

// Run opens the program full screen and returns when the operator quits.
func Run(opt Options) error {
	m := New(opt)
	defer m.Close()
	// 30 frames a second is fluid for tables and halves the renderer's idle
	// wake-ups (the only work an idle UI does) against the default 60.
	_, err := tea.NewProgram(m, tea.WithAltScreen(), tea.WithOutput(os.Stdout), tea.WithFPS(frameRate)).Run()
	return err
}
