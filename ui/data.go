package ui

import (
	"path/filepath"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui/feed"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/coord"
	"github.com/fleetwatch/fleetwatch/workers/landing"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// eventsShown is how many of the newest events the Events pane keeps.
const eventsShown = 500

type loadedMsg struct {
	d   *uictx.Data
	err error
	// view is the remote read the board was judged from (remote.go);
	// remoteErr is why a remote read failed: the last good board stays.
	view      *claims.View
	remoteErr error
	// published are the other machines' workers, read with the view
	// (remoteworkers.go); nil when the backend keeps no records.
	published *publishedRead
}

// changeMsg is one debounced burst of changes the watcher saw.
type changeMsg planfs.Change

// tickMsg drives lease countdowns; it runs only while leases exist.
type tickMsg time.Time

// loadCmd scans the tree (re-reading only what the watcher saw change) and
// judges it for every tier.
func loadCmd(t *planfs.Tree) tea.Cmd { return func() tea.Msg { return loadBoard(t) } }

// loadBoard is one scan judged: a local model runs it in loadCmd, a hub
// once for all its sessions. The data it returns is never changed after,
// so sessions share it.
func loadBoard(t *planfs.Tree) loadedMsg {
	snap, err := t.Rescan()
	if err != nil {
		return loadedMsg{err: err}
	}
	// Never a write from a refresh: what the next claim repairs shows
	// as a warning, and plans rank as if it had.
	preview, _ := t.Preview(snap)
	now := t.NowSeconds()
	b := model.NewBoard(preview, model.Options{Now: now, History: t.History()})
	b.Leases = snap.Leases // the Leases pane lists the files there are
	b.Warnings = append(b.Warnings, look.BoardProblems(t.Project)...)
	b.Warnings = append(b.Warnings, look.CapWarnings(t.Project, b.Leases, now)...)
	d := uictx.NewData(b, now)
	d.Events, d.EventsErr = t.RecentEvents(eventsShown)
	d.Parked = parkReasons(d.Events)
	d.Commits = look.BranchCommits(t.Project)
	return loadedMsg{d: d}
}

// worktreesCmd asks git about every registered agent worktree.
func worktreesCmd(project string) tea.Cmd {
	return func() tea.Msg { return readWorktrees(project) }
}

// readWorktrees is worktreesCmd's reading, shared with the hub.
func readWorktrees(project string) uictx.WorktreesMsg {
	wts, err := look.List(project)
	if err != nil {
		return uictx.WorktreesMsg{Err: err}
	}
	return uictx.WorktreesMsg{States: look.Inspect(project, wts)}
}

// waitForChangeCmd waits for the watcher's next change; it is issued again
// only when its own message arrives, so one wait is ever pending.
func waitForChangeCmd(ch <-chan planfs.Change) tea.Cmd {
	return func() tea.Msg {
		c, ok := <-ch
		if !ok {
			return nil
		}
		return changeMsg(c)
	}
}

// tickCmd ticks on the second, so a hub's sessions wake together, once a
// second between them, and judge their rows at the same clock.
func tickCmd() tea.Cmd {
	return tea.Every(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// requestTrees asks git about the worktrees, one request at a time like
// the scan: each one runs git twice per worktree.
func (m *Model) requestTrees() tea.Cmd { return m.request(feed.Trees.Set()) }

// requestLoad asks for the board: a scan, or a read of the remote.
func (m *Model) requestLoad() tea.Cmd { return m.request(feed.Board.Set()) }

// fleetCmd reads the ledger, the settings and the paused runs.
func fleetCmd(t *planfs.Tree) tea.Cmd { return func() tea.Msg { return readFleet(t) } }

// readFleet is fleetCmd's reading, shared with the hub; "today" is the
// tree's clock's.
func readFleet(t *planfs.Tree) uictx.FleetMsg {
	f, err := ledger.ReadFleet(t, t.Now())
	return uictx.FleetMsg{Fleet: f, Err: err, Paused: look.PausedRuns(t.Project), Endpoints: look.ReadEndpoints(t.Project)}
}

func (m *Model) fleetLoaded(msg uictx.FleetMsg) tea.Cmd {
	again := m.feed.req(feed.Fleet).done()
	m.fleetData, m.fleetRead = msg, true
	c := m.ctx()
	m.paneOf(fleetPane).Rebuild(c)
	m.paneOf(inboxPane).Rebuild(c) // it lists the paused runs
	m.syncKeys()
	if again {
		return m.request(feed.Fleet.Set())
	}
	return nil
}

// inboxCmd reads the inbox and renders each proposal as markdown; the
// inbox holds few entries, so all are rendered and a cursor move costs
// nothing.
func inboxCmd(t *planfs.Tree, style string, width int) tea.Cmd {
	return func() tea.Msg { return renderInbox(readInbox(t), style, width) }
}

// renderInboxCmd renders a reading already made at this session's width.
func renderInboxCmd(d uictx.InboxData, style string, width int) tea.Cmd {
	return func() tea.Msg { return renderInbox(d, style, width) }
}

// readInbox reads the entries and their proposals: files only, no rendering.
func readInbox(t *planfs.Tree) uictx.InboxData {
	es, err := coord.Inbox(t)
	if err != nil {
		return uictx.InboxData{Err: err}
	}
	props := make([]uictx.Proposal, len(es))
	for i := range es {
		props[i] = uictx.ReadProposal(es[i])
	}
	return uictx.InboxData{Entries: es, Props: props, Threads: uictx.ReadThreads(t)}
}

func renderInbox(d uictx.InboxData, style string, width int) uictx.InboxMsg {
	texts := make([]string, len(d.Props))
	for i := range d.Props {
		texts[i] = d.Props[i].Render(style, width)
	}
	return uictx.InboxMsg{Data: d, Texts: texts, Width: width}
}

// inboxWidth is the width proposals are rendered at: the preview's inside.
func (m *Model) inboxWidth() int { return max(20, m.Cols-4) }

func (m *Model) inboxLoaded(msg uictx.InboxMsg) tea.Cmd {
	again := m.feed.req(feed.Inbox).done()
	in := &m.inboxNow
	m.inboxSeen, in.Err = true, msg.Data.Err
	if msg.Data.Err == nil {
		in.Entries, in.Texts, in.Width, in.Threads = msg.Data.Entries, msg.Texts, msg.Width, msg.Data.Threads
	}
	if !m.feed.served() {
		m.inboxRaw = msg.Data // a hub's newest reading is kept as it comes
	}
	m.paneOf(inboxPane).Rebuild(m.ctx())
	m.syncKeys()
	cmds := []tea.Cmd{m.lookForNotices(fromInbox)}
	switch {
	case again && !m.feed.served():
		cmds = append(cmds, m.request(feed.Inbox.Set())) // changes came meanwhile
	case again, m.Cols > 0 && msg.Width != m.inboxWidth():
		// A newer reading came meanwhile, or the terminal was resized.
		cmds = append(cmds, m.renderInbox())
	}
	return tea.Batch(cmds...)
}

// renderInbox renders the last reading again at this session's width,
// reading nothing.
func (m *Model) renderInbox() tea.Cmd {
	return m.feed.req(feed.Inbox).request(renderInboxCmd(m.inboxRaw, m.Opt.MarkdownStyle, m.inboxWidth()))
}

// inboxDataMsg brings a hub's reading of the inbox to a session.
type inboxDataMsg uictx.InboxData

// The Workers and Merge panes' readings, held by the root: asked for
// one at a time (refresh), read off the UI goroutine, and passed to the
// panes through their context.

// workersMsg is one reading of the state files; radar says the overlap
// radar looked too, and overlaps is what it saw.
type workersMsg struct {
	states   []look.State
	problems []string
	radar    bool
	overlaps []look.Overlap
}

// readWorkers is workersCmd's reading, shared with the hub.
func readWorkers(project string, radar bool) workersMsg {
	states, problems := look.ReadStates(project)
	for i := range problems {
		problems[i] = strings.ReplaceAll(problems[i], project+string(filepath.Separator), "")
	}
	msg := workersMsg{states: states, problems: problems, radar: radar}
	if radar {
		msg.overlaps = look.Overlaps(project, states)
	}
	return msg
}

// requestWorkers reads the state files (feed.go: with the radar at most
// every radarEvery).
func (m *Model) requestWorkers() tea.Cmd { return m.request(feed.Workers.Set()) }

func (m *Model) workersLoaded(msg workersMsg) tea.Cmd {
	again := m.feed.req(feed.Workers).done()
	same := slices.Equal(m.wrk.problems, msg.problems)
	m.wrk.states, m.wrk.problems = msg.states, msg.problems
	if msg.radar {
		m.wrk.overlaps = msg.overlaps
	}
	m.wrk.judge(m.Opt.Tree.Now())
	if same {
		c := m.ctx()
		m.wrk.Rebuild(c)
		m.paneOf(fleetPane).Rebuild(c) // it lists the running runs' spend
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

// mergeMsg is one reading of the candidates and the queue.
type mergeMsg struct {
	listing landing.Listing
	err     error
}

// readMerge is mergeCmd's reading, shared with the hub: queue entries
// first, by place; the engine's order otherwise. Sorted here, once, since
// sessions share the listing.
func readMerge(project string) mergeMsg {
	l, err := landing.List(project)
	if err == nil {
		slices.SortStableFunc(l.Items, byPosition)
	}
	return mergeMsg{listing: l, err: err}
}

// requestMerge reads the queue, one reading at a time.
func (m *Model) requestMerge() tea.Cmd { return m.request(feed.Merge.Set()) }

// mergeIfShown reads the queue when the pane shows it; hidden, it is read
// when shown again.
func (m *Model) mergeIfShown() tea.Cmd { return m.request(m.shownKinds() & feed.Merge.Set()) }

func (m *Model) mergeLoaded(msg mergeMsg) tea.Cmd {
	l := &m.merge
	again := m.feed.req(feed.Merge).done()
	l.loaded, l.err = true, msg.err
	if msg.err == nil {
		l.listing = msg.listing
		if !slices.IsSortedFunc(l.listing.Items, byPosition) {
			// Sorted on a copy: a hub's listing is every session's.
			l.listing.Items = slices.Clone(l.listing.Items)
			slices.SortStableFunc(l.listing.Items, byPosition)
		}
	}
	l.Rebuild(m.ctx())
	// A notice's candidate is looked for in one reading: later, the
	// cursor is the operator's.
	l.want = ""
	m.syncKeys()
	cmds := []tea.Cmd{m.lookForNotices(fromMerge)}
	if again {
		cmds = append(cmds, m.requestMerge())
	}
	return tea.Batch(append(cmds, m.mergeTick())...)
}
