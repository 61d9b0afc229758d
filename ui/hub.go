package ui

// A served project's sessions read through one feed.Hub (ui/feed): it
// owns the watchers and does each reading once for every session, with
// the readers given here; each session's model takes the readings from
// its mailbox (hubFeed).

import (
	"context"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui/feed"
	"github.com/fleetwatch/fleetwatch/ui/forgesync"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/landing"
)

// Hub is the one owner of a served project's watchers and readings
// (feed.Hub), the sessions' Options.Hub.
type Hub = feed.Hub

// hubProblemMsg says what the hub's watchers have trouble with; "" when
// none.
type hubProblemMsg struct{ problem string }

// NewHub starts watching t for many sessions. A watcher that cannot start
// is said in every session's header, as the local UI says it.
func NewHub(t *planfs.Tree) (*Hub, error) { return NewHubClaims(t, nil) }

// NewHubClaims is NewHub for a project whose claims are in c (nil: the
// lease files): the board, and the worker records with it, are read from
// c on a claims.ReadEvery timer, on c's word of a change (claims.Watcher,
// claims.FleetWatcher) and on every change to the tree.
func NewHubClaims(t *planfs.Tree, c *claims.Opened) (*Hub, error) {
	if c != nil && c.Backend == nil {
		c = nil
	}
	return feed.NewHub(t, c, feed.Readers{
		Board:      hubBoard(t, c),
		Workers:    func(radar bool) tea.Msg { return readWorkers(t.Project, radar) },
		Trees:      func() tea.Msg { return readWorktrees(t.Project) },
		Merge:      func() tea.Msg { return readMerge(t.Project) },
		Inbox:      func() tea.Msg { return inboxDataMsg(readInbox(t)) },
		Fleet:      func() tea.Msg { return readFleet(t) },
		Problem:    func(p string) tea.Msg { return hubProblemMsg{problem: p} },
		Checking:   queueChecking,
		RadarEvery: radarEvery, MergeEvery: mergeEvery,
		Forge: func(ctx context.Context) { hubForge(ctx, t) }, ForgeEvery: forgesync.Every,
	}, Debounce), nil
}

// hubForge is the hub's reading of the forge, for every session at once
// (a project with no forge costs one look at its settings).
func hubForge(ctx context.Context, t *planfs.Tree) {
	if landing.ForgeOn(t.Project) {
		ctx, cancel := context.WithTimeout(ctx, forgesync.Timeout)
		defer cancel()
		_, _ = landing.SyncForgeInBackground(ctx, t)
	}
}

// hubBoard is the hub's reading of the board: a scan, or a read of the
// remote backend c, where a failed read carries the last good board and
// view beside its error (the hub's goroutine alone calls it).
func hubBoard(t *planfs.Tree, c *claims.Opened) func() tea.Msg {
	if c == nil {
		return func() tea.Msg { return loadBoard(t) }
	}
	var good loadedMsg
	return func() tea.Msg {
		msg := readRemote(t, c)
		if msg.remoteErr == nil {
			good = msg
			return msg
		}
		msg.d, msg.view = good.d, good.view
		return msg
	}
}

// queueChecking reports whether a queue reading has a check running.
func queueChecking(msg tea.Msg) bool {
	last, _ := msg.(mergeMsg)
	for i := range last.listing.Items {
		if last.listing.Items[i].State == landing.Checking {
			return true
		}
	}
	return false
}

// hubFeed takes a hub's readings from this session's mailbox; asking for
// a reading pokes the hub, which reads once for every session.
type hubFeed struct {
	pending // only the inbox's rendering, at this session's width
	mb      *feed.Mailbox
	remote  *remoteState // the hub's backend; its view comes with the board
}

func (f *hubFeed) start(*Model) tea.Cmd { return f.mb.Wait() }

func (f *hubFeed) read(_ *Model, ks feed.Kinds) tea.Cmd {
	if ks != 0 {
		f.mb.Poke(ks)
	}
	return nil
}

// board takes the hub's view; the hub reads on its own timer.
func (f *hubFeed) board(m *Model, msg loadedMsg) (tea.Cmd, bool) {
	return nil, f.remote.took(m, msg)
}

func (f *hubFeed) handle(m *Model, msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case feed.Msgs:
		return f.arrived(m, msg), true
	case hubProblemMsg:
		m.problem = msg.problem
		return nil, true
	case inboxDataMsg:
		// Rendered here, at this session's width.
		m.inboxRaw = uictx.InboxData(msg)
		return m.renderInbox(), true
	}
	return nil, false
}

// show tells the hub which pane the session shows: worktrees and the
// queue are read on a change only while some session shows them.
func (f *hubFeed) show(p uictx.PaneID) {
	var w feed.Kinds
	switch p {
	case worktreesPane:
		w = feed.Trees.Set()
	case mergePane:
		w = feed.Merge.Set()
	}
	f.mb.Want(w)
}

// due is nothing: the hub runs the radar at its own pace.
func (f *hubFeed) due(*Model) tea.Cmd { return nil }

func (f *hubFeed) served() bool { return true }

func (f *hubFeed) claims() *remoteState { return f.remote }

func (f *hubFeed) close(*Model) { f.mb.Close() }

// arrived applies what a session took from its mailbox and waits for
// more.
func (f *hubFeed) arrived(m *Model, msgs feed.Msgs) tea.Cmd {
	cmds := make([]tea.Cmd, 0, len(msgs)+1)
	for _, msg := range msgs {
		cmd, _ := m.updateData(msg)
		cmds = append(cmds, cmd)
	}
	// The readings a verb asked the hub for are in (or come next).
	m.settle.rereading = false
	cmds = append(cmds, m.settled(false))
	if !f.mb.Ended() {
		cmds = append(cmds, f.mb.Wait())
	}
	return tea.Batch(cmds...)
}

// StopMsg tells a session's model the server is stopping: it shows Reason
// on its status line and quits.
type StopMsg struct{ Reason string }

// hubOf is the hub opt brings, nil for none.
func hubOf(opt uictx.Options) *Hub {
	h, _ := opt.Hub.(*Hub)
	return h
}
