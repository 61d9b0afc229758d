// Package ui is fleetwatch's operator cockpit: a Bubble Tea program showing
// the lanes with each tier's pick order, dependencies, leases, worktrees,
// workers (spawned, stopped, paused, their logs side by side), the event
// log, the merge queue, the coordinator's inbox and the fleet's spend,
// refreshed by file watchers, and acting through the engine's verbs. It
// reaches the disk and processes only through planfs and workers (with
// its coord, ledger and landing).
//
// Shape: Model holds the shared context (uictx.Common: options, renderer,
// styles, key map, sizes, clock), the panes the registry makes (paneSpecs
// in pane.go: tab order, number keys, names; one line per pane), and a
// stack of overlays (dialog, spawn form, help, logs, reader) whose top
// takes the keys; key() (input.go) holds the order in which keys are
// offered. A pane is a package under ui/panes/ (docs/panes.md) over
// ui/uictx (the context, the reading, the Pane interface and the
// requests), ui/kit (table, columns, styles, text, filter, markdown),
// ui/verbs (the verbs several panes offer: release, recover, pause, stop)
// and ui/mergekeys (the merge keys the Merge and Plans panes share). The
// readings more than one part needs (the workers, the merge listing, the
// plan's preview) are held here and given to the panes read-only. A pane
// never sees the Model nor another pane: its methods take a uictx.Ctx
// (the shared context, the reading, the shown pane and its selection),
// and what it asks of the root (a question, a detail, a diff, a status
// line) it returns as a request, which route (below) answers in one
// place; a reading of its own reaches it through uictx.Loader.
// internal/shape holds this shape.
//
// The readings come through one feed (feed.go): the model's own watchers
// (localFeed), or, served over SSH, one Hub (hub.go) that owns the
// watchers and does each reading once for every session's model
// (hubFeed, its mailbox); the root asks for a reading with request(kinds)
// either way. A viewer's session (Options.ReadOnly, readonly.go) shows
// and takes no action key.
//
// With remote claims (Options.Claims: the git remote's lease refs, etcd;
// remote.go) the board is the backend's view, read in a tea.Cmd on a
// timer, on the backend's watch and on the disk's changes; the header
// says how old it is and every lease's owner says the host it is held on.
// Every verb a dialog confirms is one claims.Act (act.go) on the
// project's backend: claims.Local over the board the operator saw for the
// lease files, else the remote's.
package ui

import (
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/feed"
	"github.com/fleetwatch/fleetwatch/ui/forgesync"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/panes/plans"
	"github.com/fleetwatch/fleetwatch/ui/panes/workers"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// frameRate caps how often the screen is redrawn.
const frameRate = 30

// Debounce is how long the watcher waits for a burst of changes to end.
const Debounce = 50 * time.Millisecond

// Model is the whole program state: the shared context, the data, one
// sub-model per pane and the overlay stack. Update changes it; View only
// reads it.
type Model struct {
	// The context and the panes are held by pointer: bubbletea copies the
	// model at every message, and a copy of all of it is some 60 KB (one
	// message per change in each of many served sessions).
	*uictx.Common
	*shell

	d       *uictx.Data
	loadErr error
	// feed brings the readings, each asked for one at a time: the
	// model's own watchers, or a hub's mailbox; with remote claims, the
	// backend's view too (feed.go).
	feed    readings
	problem string // the tree vanished or cannot be watched
	ticking bool

	pane uictx.PaneID
	*paneSet

	stack           overlays
	logGen, formGen int
	// staticCursors keeps text fields from blinking (tests).
	staticCursors bool

	status    string
	statusErr bool
	settle    settling // keys waiting for the screen to catch up with a verb

	notes noticeBook // what needs a person; N lists it (notices.go)
}

// paneSet is the panes, one per entry of paneSpecs, and the readings the
// root holds for them and for itself (the header, the notices): the
// workers (workers.go), the merge listing (merge.go) and the selected
// plan's preview (preview.go), which the panes are given read-only.
type paneSet struct {
	// panes are the registry's, in its order (paneSpecs).
	panes []uictx.Pane
	wrk   workerReading
	merge mergeReading
	pv    uictx.Preview
}

// New builds the program's model and starts the file watchers.
func New(opt uictx.Options) Model {
	if opt.Renderer == nil {
		opt.Renderer = lipgloss.DefaultRenderer()
	}
	if opt.MarkdownStyle == "" {
		opt.MarkdownStyle = "notty"
	}
	if opt.TTL <= 0 {
		opt.TTL = planfs.DefaultTTL
	}
	if h, ok := opt.Hub.(*Hub); ok && h == nil {
		opt.Hub = nil // a nil *Hub is no hub, not one that panics
	}
	m := Model{
		Common: newCommon(opt), shell: &shell{},
		paneSet: &paneSet{
			pv: uictx.Preview{VP: viewport.New(0, 0)},
		},
	}
	m.openPanes()
	m.wrk.pane, m.wrk.inbox, m.merge.pane = m.paneOf(workersPane), m.paneOf(inboxPane), m.paneOf(mergePane)
	m.feed, m.problem = newFeed(opt)
	m.initFilters()
	m.syncKeys()
	return m
}

func newCommon(opt uictx.Options) *uictx.Common {
	c := &uictx.Common{
		Opt:   opt,
		R:     opt.Renderer,
		Keys:  DefaultKeyMap(),
		St:    kit.NewStyles(opt.Renderer),
		Help:  help.New(),
		Plain: opt.Renderer.ColorProfile() == termenv.Ascii,
		Why:   map[string]string{},
		Off:   map[*key.Binding]string{},
	}
	c.Help.Styles = kit.HelpStyles(opt.Renderer)
	if on, _, ok := strings.Cut(c.St.Text.Render("x"), "x"); ok && !c.Plain {
		c.InkOn = on
	}
	if on, _, ok := strings.Cut(c.St.SelectedRow.Render("x"), "x"); ok && !c.Plain {
		c.RowOn = on
	}
	return c
}

// Init loads the tree and starts waiting for changes.
func (m Model) Init() tea.Cmd { return m.feed.start(&m) }

// Close stops the watchers and the logs being followed. A source from the
// options is its owner's to close.
func (m *Model) Close() {
	m.feed.close(m)
	if v := m.logsShown(); v != nil {
		for _, t := range v.tails() {
			_ = t.Close()
		}
	}
}

// Update applies one message.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	seq, shown, had := m.statusSeq, m.pane, m.mergeShown()
	cmd := m.update(msg)
	if m.pane != shown {
		m.feed.show(m.pane)
	}
	if m.mergeShown() && !had {
		// The queue is read only while shown (and while it checks).
		cmd = tea.Batch(cmd, m.requestMerge(), m.mergeTick())
	}
	if m.pane == fleetPane && shown != fleetPane {
		// Shown, the spend is read afresh: settings edited and a new day
		// change it with no file of the tree or the workers saying so.
		cmd = tea.Batch(cmd, m.request(feed.Fleet.Set()))
	}
	return m, tea.Batch(cmd, m.fadeCmd(seq))
}

// update routes a message: data to the pane that shows it, keys to the
// top overlay or the pane, the rest to the text field that is typed in.
func (m *Model) update(msg tea.Msg) tea.Cmd {
	if cmd, ok := m.updateData(msg); ok {
		return tea.Batch(cmd, m.settled(false))
	}
	if cmd, ok := m.updateAsked(msg); ok {
		return cmd
	}
	if cmd, ok := m.updateOverlays(msg); ok {
		return cmd
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.Width, m.Height = msg.Width, msg.Height
		m.layout()
		if v := m.logsShown(); v != nil {
			for i := range v.panes {
				m.clampLog(i)
			}
		}
		return m.schedulePreview()
	case uictx.ActionMsg:
		if msg.Err != nil {
			m.setStatus("✗ "+msg.Err.Error(), true)
		} else {
			m.setStatus("✓ "+msg.Done, false)
		}
		return m.request(feed.Board.Set() | feed.Workers.Set() | feed.Inbox.Set() | feed.Fleet.Set() | m.shownKinds())
	case answeredMsg:
		return m.answered(msg)
	case settleMsg:
		if msg.seq != m.settle.seq {
			return nil
		}
		return m.settled(true)
	case tea.KeyMsg:
		m.hinted = true
		return m.key(msg)
	case StopMsg:
		return m.stop(msg)
	case statusFadeMsg:
		m.fadeStatus(msg)
		return nil
	}
	if f := m.formShown(); f != nil {
		return f.updateInput(msg)
	}
	if f, ok := find[*newPlanForm](m.stack); ok {
		return f.updateInput(msg)
	}
	if f := m.typingFilter(); f != nil {
		var cmd tea.Cmd
		f.Input, cmd = f.Input.Update(msg)
		return cmd
	}
	return nil
}

// offer gives a reading to the panes that take it (uictx.Loader).
func (m *Model) offer(msg tea.Msg) {
	c := m.ctx()
	for _, p := range m.panes {
		if l, ok := p.(uictx.Loader); ok {
			l.Loaded(c, msg)
		}
	}
}

// updateOverlays takes what the overlays and the preview asked for off
// the UI goroutine: a spawn form, a spawn, logs, a diff, a detail, a
// preview.
func (m *Model) updateOverlays(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case spawnFormMsg:
		return m.openForm(msg), true
	case spawnedMsg:
		return m.spawned(msg), true
	case logOpenedMsg:
		return m.logOpened(msg), true
	case logLinesMsg:
		return m.logLines(msg), true
	case diffMsg:
		m.diffArrived(msg)
	case detailMsg:
		m.detailLoaded(msg)
	case previewDueMsg:
		if r := m.selectedPlan(); r != nil && msg.seq == m.pv.Seq {
			return renderPreviewCmd(m.Opt.Tree, kit.FileRel(r.Plan.Rel, r.Lease), uictx.PreviewNote(m.d, r), m.previewWant(r), m.Opt.MarkdownStyle, m.previewWidth(), msg.seq), true
		}
	case previewMsg:
		m.previewed(msg)
	default:
		return nil, false
	}
	return nil, true
}

// updateData takes the messages that bring data: scans, git, the state
// files, the watchers and the clock.
func (m *Model) updateData(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case loadedMsg:
		return m.loaded(msg), true
	case uictx.WorktreesMsg:
		m.offer(msg)
		m.syncKeys() // enter opens a worktree once there is one
		if m.feed.req(feed.Trees).done() {
			return m.requestTrees(), true
		}
		return nil, true
	case workersMsg:
		return m.workersLoaded(msg), true
	case tickMsg:
		return m.tick(), true
	case mergeMsg:
		return m.mergeLoaded(msg), true
	case mergeTickMsg:
		return m.mergeTicked(), true
	case uictx.InboxMsg:
		return m.inboxLoaded(msg), true
	case uictx.FleetMsg:
		return m.fleetLoaded(msg), true
	case forgesync.DoneMsg:
		return m.merge.forgeDone(m, msg), true
	case forgesync.TickMsg:
		return m.merge.forge.Ticked(m.Opt.Tree), true
	case forgesync.OnMsg:
		return m.merge.forgeOn(m, msg), true
	case publishedMsg:
		return m.publishedLoaded(msg), true
	}
	return m.feed.handle(m, msg)
}

func (m *Model) setStatus(s string, isErr bool) {
	m.status, m.statusErr = termtext.Line(s), isErr
	m.statusSeq++
}

func (m *Model) loaded(msg loadedMsg) tea.Cmd {
	var cmds []tea.Cmd
	if m.feed.req(feed.Board).done() {
		cmds = append(cmds, m.request(feed.Board.Set()))
	}
	next, show := m.feed.board(m, msg)
	cmds = append(cmds, next)
	if !show && msg.err == nil {
		// A remote that cannot be read: the last good board stays, the
		// header says why, and the age goes on counting.
		return tea.Batch(append(cmds, m.startTicking())...)
	}
	if msg.err != nil {
		m.loadErr = msg.err
		return tea.Batch(cmds...)
	}
	m.loadErr = nil
	first := m.d == nil
	m.d, m.Now = msg.d, msg.d.Now
	if first {
		plansOf(m).OpenOnFirstLane(m.d)
	}
	m.rebuild()
	m.dropStaleDialog()
	cmds = append(cmds, m.lookForNotices(fromBoard))
	if len(m.d.Board.Leases) > 0 || m.feed.claims() != nil {
		cmds = append(cmds, m.startTicking())
	}
	cmds = append(cmds, m.schedulePreview())
	return tea.Batch(cmds...)
}

// startTicking starts the one-second clock unless it runs.
func (m *Model) startTicking() tea.Cmd {
	if m.ticking {
		return nil
	}
	m.ticking = true
	return tickCmd()
}

// dropStaleDialog closes a dialog whose plan moved or changed hands in
// this scan: confirming it would act on facts that are gone.
func (m *Model) dropStaleDialog() {
	d := m.dialogShown()
	if d == nil || d.rel == "" {
		return
	}
	leaseAt := func(rel string) *model.Lease {
		for i := range m.d.Board.Leases {
			if m.d.Board.Leases[i].Rel == rel {
				return &m.d.Board.Leases[i]
			}
		}
		return nil
	}
	if leasePrint(leaseAt(d.rel)) != d.seen || m.planExists(d.rel) != d.existed {
		// Named from this scan: where the plan is now and who holds
		// it there (a claim moves it to in-progress/).
		cur := placeIn(m.d.Rels, d.rel)
		m.stack.remove(d)
		m.setStatus("✗ "+kit.SlugOf(d.rel)+" changed while you decided ("+changedWords(d.rel, cur, leaseAt(cur))+"); look again", true)
	}
}

// tick moves the countdowns and heartbeat ages on; when a lease runs out,
// eligibility changes, so the board is judged again; running workers are
// judged again too (a heartbeat grows stale, a process dies).
func (m *Model) tick() tea.Cmd {
	leases := m.d != nil && len(m.d.Board.Leases) > 0
	running := m.workersRunning()
	// A remote view's age goes on counting in the header.
	if !leases && !running && m.feed.claims() == nil {
		m.ticking = false
		return nil
	}
	prev := m.Now
	m.Now = m.clockNow()
	m.paneOf(plansPane).List().Invalidate()
	m.paneOf(leasesPane).List().Invalidate()
	m.paneOf(workersPane).List().Invalidate()
	m.paneOf(eventsPane).List().Invalidate()
	var cmds []tea.Cmd
	if running {
		m.wrk.judge(m.Opt.Tree.Now())
		c := m.ctx()
		m.wrk.Rebuild(c)
		m.paneOf(fleetPane).Rebuild(c) // a run that goes stale or dies leaves its list
		m.syncKeys()
		cmds = append(cmds, m.lookForNotices(fromClock), m.feed.due(m))
	}
	for i := 0; leases && i < len(m.d.Board.Leases); i++ {
		if l := &m.d.Board.Leases[i]; l.Corrupt == "" && l.Awaiting == "" && l.ExpiresAt > prev && l.ExpiresAt <= m.Now {
			cmds = append(cmds, m.request(feed.Board.Set()))
			break
		}
	}
	return tea.Batch(append(cmds, tickCmd())...)
}

// layout sizes every pane for the terminal; rows render again when seen.
func (m *Model) layout() {
	m.Cols = max(1, m.Width-1)
	m.Wide = m.Width >= 100
	bodyH := max(1, m.Height-2)
	// Narrow: every table takes the body's width, bare; wide: boxed, the
	// plans beside the lanes.
	w, rows, planW, planRows := m.Cols, bodyH-1, m.Cols, bodyH-2
	th, ph := plans.Split(m.Common, bodyH)
	if m.Wide {
		w, rows, planW, planRows = m.Cols-2, bodyH-3, m.Cols-plans.LaneBoxWidth-2, th-3
		m.pv.VP.Width, m.pv.VP.Height = planW-2, max(1, ph-2)
	}
	for p := range paneCount() {
		if p == plansPane {
			m.paneOf(p).SetSize(planW, planRows)
		} else {
			m.paneOf(p).SetSize(w, rows)
		}
	}
	if m.reading() {
		// Less the title and the facts line (readerFacts).
		m.pv.VP.Width, m.pv.VP.Height = m.Cols-2, max(1, bodyH-2)
	}
	m.Help.Width = m.Width
	m.rebuild()
}

func (m *Model) tableWidth() int { return m.current().Width }

// Run opens the program full screen and returns when the operator quits.
func Run(opt uictx.Options) error {
	if opt.Out == nil {
		opt.Out = os.Stdout
	}
	m := New(opt)
	defer m.Close()
	// 30 frames a second is fluid for tables and halves the renderer's idle
	// wake-ups (the only work an idle UI does) against the default 60.
	_, err := tea.NewProgram(m, tea.WithAltScreen(), tea.WithOutput(opt.Out), tea.WithFPS(frameRate)).Run()
	return err
}

// The root's side of the panes: what is shown and selected, their keys
// and rows brought up to date, and what they ask for.

// current is the shown pane's table.
func (m *Model) current() *kit.Table { return m.paneOf(m.pane).List() }

func (m *Model) selection() uictx.Selection { return m.paneOf(m.pane).Selected() }

func (m *Model) selectedPlan() *model.BoardRow { return m.selection().Row }

// target is the plan an action applies to and its lease: the selected plan,
// or the selected lease's plan.
func (m *Model) target() (rel string, row *model.BoardRow, lease *model.Lease) {
	s := m.selection()
	return s.Rel, s.Row, s.Lease
}

// syncKeys enables the actions that apply to the selection and remembers
// why the others do not. Each pane sets its own keys; the shown pane goes
// last, so where panes share a key its reason is the one said.
func (m *Model) syncKeys() {
	set := func(b *key.Binding, ok bool, why string) {
		b.SetEnabled(ok)
		m.Off[b] = why
		for _, k := range b.Keys() {
			m.Why[k] = why
		}
	}
	set(&m.Keys.Spawn, m.Opt.Self != "", "spawn: this UI does not know its own binary, so it cannot start workers")
	c := m.ctx()
	for p := range paneCount() {
		if p != m.pane {
			m.paneOf(p).SyncKeys(c, set)
		}
	}
	m.paneOf(m.pane).SyncKeys(c, set)
	m.refuseKeys(set)
}

// rebuild derives every pane's rows from the latest data.
func (m *Model) rebuild() {
	c := m.ctx()
	for p := range paneCount() {
		m.paneOf(p).Rebuild(c)
	}
	m.syncKeys()
}

// route does what a pane asked for by the message its key returned: the
// one place a pane's requests reach the root.
func (m *Model) route(req tea.Msg) tea.Cmd {
	switch r := req.(type) {
	case nil:
		return nil
	case tea.Cmd:
		return r
	case uictx.AskReq:
		d := &dialog{Question: r.Q}
		if r.Verb != "" {
			d.Do = m.verbDo(r)
		}
		m.ask(d, r.Rel, r.Lease)
	case uictx.DetailReq:
		return m.openDetail(r.ID, r.Title, r.Read)
	case uictx.DiffReq:
		return m.openDiff(r.What, r.Req, r.Compute)
	case uictx.StatusReq:
		m.setStatus(r.Text, r.Err)
	case uictx.WorkerReq:
		agent, project := r.AgentID, m.Opt.Tree.Project
		return m.openDetail("worker:"+agent, "worker · "+agent, func() func(*uictx.Ctx) []string {
			wd := look.ReadWorkerDetail(project, agent)
			return func(pc *uictx.Ctx) []string { return workers.Detail(pc.Common, wd, nil) }
		})
	case uictx.PublishedReq:
		return m.openDetail("worker:"+r.P.Host+"/"+r.P.AgentID, "worker · "+r.P.AgentID+" on "+r.P.Host, publishedDetail(m.ctx().Claims, r))
	case uictx.RemoteStopReq:
		if rs := m.feed.claims(); rs != nil {
			m.stack.push(remoteStop(rs.c, r))
		}
	case uictx.QuestionReq:
		m.stack.push(&dialog{Question: r.Q})
	case uictx.LogsReq:
		return m.openLogs()
	case uictx.PreviewScrollReq:
		if r > 0 {
			m.pv.VP.HalfPageDown()
		} else {
			m.pv.VP.HalfPageUp()
		}
	case uictx.MoveReq:
		return m.moveCursor(int(r))
	case uictx.SelectedReq:
		m.syncKeys()
		return m.schedulePreview()
	case uictx.ReaderReq:
		m.stack.push(&reader{})
		m.layout()
		return m.schedulePreview()
	case uictx.NewPlanReq:
		return m.askNewPlan()
	case uictx.EditReq:
		return m.askEdit()
	case uictx.BrowseReq:
		return m.merge.browse(m, r.URL)
	case uictx.ForgeSyncReq:
		return m.merge.syncForge(m)
	case uictx.BatchReq:
		cmds := make([]tea.Cmd, len(r))
		for i, q := range r {
			cmds[i] = m.route(q)
		}
		return tea.Batch(cmds...)
	}
	return nil
}

// The options and the key map are the shared context's (ui/uictx); these
// names keep the cockpit's own for the commands that start it.
type (
	Options = uictx.Options
	Source  = uictx.Source
	KeyMap  = uictx.KeyMap
)
