package ui

// The feed is where the cockpit's readings come from, behind one
// interface so the root asks for a reading the same way whoever reads:
// localFeed reads the tree and the state files on its own watchers (and,
// with remote claims, the backend on its timer and watch), hubFeed takes
// a hub's readings from its mailbox. The readings themselves (loadedMsg,
// workersMsg, …) are the same messages either way, taken in updateData.

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/ui/feed"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// readings is one model's feed: where its readings come from.
type readings interface {
	// start is Init's: the first readings and the first waits.
	start(m *Model) tea.Cmd
	// read asks for the readings in ks: a command that reads them, or
	// nil when they come by themselves (a hub's) or one runs already.
	read(m *Model, ks feed.Kinds) tea.Cmd
	// board takes the feed's part of a board's reading (a remote view,
	// its error, the timer that reads it again) and reports whether
	// there is a board to show.
	board(m *Model, msg loadedMsg) (tea.Cmd, bool)
	// handle takes the feed's own messages (watchers, timers, mailbox).
	handle(m *Model, msg tea.Msg) (tea.Cmd, bool)
	// show says which pane is on screen: some readings follow it.
	show(p uictx.PaneID)
	// served reports whether a hub reads for this model, once for all
	// its sessions: the model then reads, ticks and looks for nothing.
	served() bool
	// claims is the remote claims backend's state; nil for lease files.
	claims() *remoteState
	// due is what the clock finds due: the overlap radar that a reading
	// of the workers went without.
	due(m *Model) tea.Cmd
	// req is the request of reading k under way, one at a time.
	req(k feed.Kind) *refresh
	close(m *Model)
}

// newFeed is the feed opt asks for, and the trouble its watchers had.
func newFeed(opt uictx.Options) (readings, string) {
	r := newRemote(opt)
	if h := hubOf(opt); h != nil {
		return &hubFeed{mb: h.Subscribe(), remote: r}, ""
	}
	f := &localFeed{remote: r}
	for k := range f.reqs {
		// Init starts every reading.
		f.reqs[k].busy = true
	}
	problem := f.watch(opt)
	if r != nil && !opt.NoWatch {
		r.startWatch()
	}
	return f, problem
}

// localFeed reads for one model: the tree's watcher (or the options'
// source), the state files' watcher, and a remote backend's timer.
type localFeed struct {
	pending
	watcher uictx.Source
	own     bool // the watcher is this feed's to close
	states  *look.StateWatcher
	remote  *remoteState
	// radarAt is when the overlap radar was last asked for; radarDue that
	// a reading of the workers went without it since.
	radarAt  time.Time
	radarDue bool
}

// radarEvery is the least time between two looks of the overlap radar:
// each asks git merge-tree about every pair that touches the same path.
const radarEvery = 3 * time.Second

// watch starts the watchers, unless the options bring a source or ask for
// none; it says what could not be watched.
func (f *localFeed) watch(opt uictx.Options) (problem string) {
	f.watcher = opt.Source
	if opt.NoWatch {
		return ""
	}
	if f.watcher == nil {
		w, err := opt.Tree.Watch(Debounce)
		if err != nil {
			problem = "not watching for changes: " + err.Error()
		} else {
			f.watcher, f.own = w, true
		}
	}
	sw, err := look.WatchStates(opt.Tree.Project, Debounce)
	if err != nil {
		problem = "not watching workers: " + err.Error()
	} else {
		f.states = sw
	}
	return problem
}

func (f *localFeed) start(m *Model) tea.Cmd {
	t := m.Opt.Tree
	cmds := []tea.Cmd{boardCmd(t, f.remote), worktreesCmd(t.Project), workersCmd(t.Project, true), mergeCmd(t.Project),
		inboxCmd(t, m.Opt.MarkdownStyle, m.inboxWidth()), fleetCmd(t), m.merge.forge.Begin(t)}
	if f.watcher != nil {
		cmds = append(cmds, waitForChangeCmd(f.watcher.Changes()))
	}
	if f.states != nil {
		cmds = append(cmds, waitForStatesCmd(f.states.Changes()))
	}
	if f.remote != nil && f.remote.watch != nil {
		cmds = append(cmds, waitRemoteCmd(f.remote.watch))
	}
	if f.remote != nil {
		cmds = append(cmds, waitPublishedCmd(f.remote.fleetWatch)) // nil without a fleet watch
	}
	return tea.Batch(cmds...)
}

// read runs each reading one at a time (refresh): asked while one runs,
// it runs once more when that one ends.
func (f *localFeed) read(m *Model, ks feed.Kinds) tea.Cmd {
	t := m.Opt.Tree
	var cmds []tea.Cmd
	if ks.Has(feed.Board) {
		cmds = append(cmds, f.req(feed.Board).request(boardCmd(t, f.remote)))
	}
	if ks.Has(feed.Trees) {
		cmds = append(cmds, f.req(feed.Trees).request(worktreesCmd(t.Project)))
	}
	if ks.Has(feed.Workers) {
		cmds = append(cmds, f.readWorkers(m))
	}
	if ks.Has(feed.Merge) {
		cmds = append(cmds, f.req(feed.Merge).request(mergeCmd(t.Project)))
	}
	if ks.Has(feed.Inbox) {
		cmds = append(cmds, f.req(feed.Inbox).request(inboxCmd(t, m.Opt.MarkdownStyle, m.inboxWidth())))
	}
	if ks.Has(feed.Fleet) {
		cmds = append(cmds, f.req(feed.Fleet).request(fleetCmd(t)))
	}
	return tea.Batch(cmds...)
}

// readWorkers reads the state files; the overlap radar looks with it at
// most every radarEvery, and a reading without it leaves the radar due
// (the clock's tick asks again).
func (f *localFeed) readWorkers(m *Model) tea.Cmd {
	if f.req(feed.Workers).busy {
		return f.req(feed.Workers).request(nil)
	}
	now := time.Now()
	radar := now.Sub(f.radarAt) >= radarEvery
	if radar {
		f.radarAt, f.radarDue = now, false
	} else {
		f.radarDue = true
	}
	return f.req(feed.Workers).request(workersCmd(m.Opt.Tree.Project, radar))
}

func (f *localFeed) board(m *Model, msg loadedMsg) (tea.Cmd, bool) {
	next, show := f.remote.timer(m.Opt), f.remote.took(m, msg)
	if show {
		// Leases handed to the inbox, or taken back from it, show in a
		// scan (a hub reads the inbox with every scan by itself).
		next = tea.Batch(next, f.read(m, feed.Inbox.Set()))
	}
	return next, show
}

// handle takes the watchers' words and the remote's timer and watch.
func (f *localFeed) handle(m *Model, msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case changeMsg:
		var next tea.Cmd
		if f.watcher != nil {
			next = waitForChangeCmd(f.watcher.Changes())
		}
		m.problem = ""
		if msg.Err != nil {
			// The watcher may have lost events (a full queue): look again.
			m.problem = msg.Err.Error()
		}
		return tea.Batch(next, m.request(feed.Board.Set()|feed.Fleet.Set()|m.shownKinds())), true
	case stateChangeMsg:
		var next tea.Cmd
		if f.states != nil {
			next = waitForStatesCmd(f.states.Changes())
		}
		// A run's spend and pause are in its state file; a run that
		// ends has been added to the ledger.
		return tea.Batch(next, m.request(feed.Workers.Set()|feed.Fleet.Set())), true
	}
	if f.remote == nil {
		return nil, false
	}
	return f.remote.handle(m, msg)
}

// due asks for a reading when the radar skipped the last one and its
// interval has passed.
func (f *localFeed) due(m *Model) tea.Cmd {
	if !f.radarDue || time.Since(f.radarAt) < radarEvery {
		return nil
	}
	return f.read(m, feed.Workers.Set())
}

func (f *localFeed) show(uictx.PaneID) {}

func (f *localFeed) served() bool { return false }

func (f *localFeed) claims() *remoteState { return f.remote }

// close stops the watchers; a source from the options is its owner's.
func (f *localFeed) close(*Model) {
	if f.watcher != nil && f.own {
		_ = f.watcher.Close()
	}
	if f.states != nil {
		_ = f.states.Close()
	}
	f.remote.close()
}

// request asks the feed for the readings in ks.
func (m *Model) request(ks feed.Kinds) tea.Cmd { return m.feed.read(m, ks) }

// shownKinds is the readings a change calls for only while their pane is
// shown (git twice per worktree; the queue).
func (m *Model) shownKinds() feed.Kinds {
	var ks feed.Kinds
	if m.pane == worktreesPane {
		ks |= feed.Trees.Set()
	}
	if m.mergeShown() {
		ks |= feed.Merge.Set()
	}
	return ks
}

// pending is a feed's requests, one per kind of reading.
type pending struct{ reqs [feed.KindCount]refresh }

func (p *pending) req(k feed.Kind) *refresh { return &p.reqs[k] }

// refresh runs one request at a time: asked while one runs, it runs once
// more when that one ends, so a burst of changes never queues work (a
// scan, git twice per worktree, a reading of every state file).
type refresh struct{ busy, again bool }

// request starts cmd, or remembers to run once more when busy.
func (r *refresh) request(cmd tea.Cmd) tea.Cmd {
	if r.busy {
		r.again = true
		return nil
	}
	r.busy = true
	return cmd
}

// done ends the running request and reports whether another is due.
func (r *refresh) done() bool {
	again := r.again
	r.busy, r.again = false, false
	return again
}
