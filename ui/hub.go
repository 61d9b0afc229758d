package ui

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/landing"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// Hub is the one owner of a served project's watchers and readings: it
// watches the tree and the workers' state files once, reads each change
// once (the scan and board, worktrees, workers, merge queue, inbox) and
// fans the results out to every session's model. A slow session never
// slows the others: each gets only the newest of what it has not taken yet.
//
// One goroutine (run) owns the watchers and does every reading; sessions
// only poke it (asks for a reading, coalesced) and take from their own
// mailbox. The readings it sends are never changed after, so sessions
// share them.
type Hub struct {
	tree *planfs.Tree
	// claims is the remote claims backend the board is read from; nil
	// for the lease files. Every session acts through it too.
	claims *claims.Opened

	mu     sync.Mutex
	subs   map[*mailbox]bool
	last   [kindCount]tea.Msg // the newest of each reading, for a session that comes later
	closed bool

	poked  atomic.Uint32 // the kinds asked for since the last reading
	pokeCh chan struct{} // 1-buffered: a poke is waiting
	quit   chan struct{}
	done   chan struct{}
	once   sync.Once

	watcher *planfs.Watcher
	states  *look.StateWatcher
	problem string // the watchers' trouble, as the header says it
	// goodBoard is the last remote read that worked: a failed one goes
	// out with it, so a session opened since still shows a board.
	goodBoard loadedMsg
	radarAt   time.Time

	mergeAt atomic.Int64 // when the queue was last read, Unix nanoseconds (projects.go)

	rows  *kit.RowCache // the panes' rows, rendered once for the sessions alike
	lines *kit.LineMemo // the frames' lines, laid out once
}

// kind is one of the readings a hub sends; each mailbox keeps only the
// newest of each.
type kind uint8

const (
	kindBoard kind = iota
	kindTrees
	kindWorkers
	kindMerge
	kindInbox
	kindFleet
	kindProblem
	kindCount
)

// kinds is a set of readings, one bit per kind.
type kinds uint32

func (k kind) set() kinds { return 1 << k }

func (s kinds) has(k kind) bool { return s&k.set() != 0 }

const allKinds = kinds(1<<kindCount - 1)

// hubProblemMsg says what the hub's watchers have trouble with; "" when
// none.
type hubProblemMsg struct{ problem string }

// hubMsg is what a session took from its mailbox: the newest of each
// reading that came since it last looked, in kind order (the board first).
type hubMsg []tea.Msg

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
	h := &Hub{
		tree: t, claims: c, subs: map[*mailbox]bool{}, rows: kit.NewRowCache(), lines: kit.NewLineMemo(),
		pokeCh: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
	}
	w, err := t.Watch(Debounce)
	if err != nil {
		h.problem = "not watching for changes: " + err.Error()
	} else {
		h.watcher = w
	}
	sw, err := look.WatchStates(t.Project, Debounce)
	if err != nil {
		h.problem = "not watching workers: " + err.Error()
	} else {
		h.states = sw
	}
	go h.run()
	return h, nil
}

// Close stops the hub's watchers and ends every mailbox: sessions still
// open see no more changes.
func (h *Hub) Close() error {
	h.once.Do(func() {
		close(h.quit)
		<-h.done
		if h.watcher != nil {
			_ = h.watcher.Close()
		}
		if h.states != nil {
			_ = h.states.Close()
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		h.closed = true
		for mb := range h.subs {
			mb.end()
		}
		clear(h.subs)
	})
	return nil
}

// run is the owner goroutine: it waits for a change, a poke or a tick,
// then reads what they call for, once, and sends it to every mailbox.
func (h *Hub) run() {
	defer close(h.done)
	var changes <-chan planfs.Change
	if h.watcher != nil {
		changes = h.watcher.Changes()
	}
	var states <-chan look.StateChange
	if h.states != nil {
		states = h.states.Changes()
	}
	mergeTick := time.NewTicker(mergeEvery)
	defer mergeTick.Stop()
	remoteTick, remoteChanges, fleetChanges, stop := h.remoteClock()
	defer stop()
	var radar <-chan time.Time
	pending := allKinds // the first reading: everything
	for {
		if pending != 0 {
			if due := h.read(pending); due > 0 && radar == nil {
				radar = time.After(due)
			}
			pending = 0
		}
		select {
		case <-h.quit:
			return
		case c, ok := <-changes:
			if !ok {
				changes = nil
				continue
			}
			pending |= h.changed(c)
		case _, ok := <-states:
			if !ok {
				states = nil
				continue
			}
			pending |= kindWorkers.set() | kindFleet.set()
		case <-h.pokeCh:
			pending |= kinds(h.poked.Swap(0))
		case <-mergeTick.C:
			if h.mergeWatched() {
				pending |= kindMerge.set()
			}
		case <-radar:
			radar = nil
			pending |= kindWorkers.set()
		case <-remoteTick:
			pending |= kindBoard.set()
		case _, ok := <-remoteChanges:
			if !ok {
				remoteChanges = nil
				continue
			}
			pending |= kindBoard.set()
		case _, ok := <-fleetChanges:
			if !ok {
				fleetChanges = nil
				continue
			}
			// The board's reading carries the worker records.
			pending |= kindBoard.set()
		}
	}
}

// readRemote reads the remote backend; a failed read carries the last
// good board and view beside its error.
func (h *Hub) readRemote() loadedMsg {
	msg := readRemote(h.tree, h.claims)
	if msg.remoteErr == nil {
		h.goodBoard = msg
		return msg
	}
	msg.d, msg.view = h.goodBoard.d, h.goodBoard.view
	return msg
}

// remoteClock is what makes the hub read a remote backend again: a
// claims.ReadEvery ticker, and the backend's changes to leases and to
// worker records when it says them. All are nil for the lease files; stop
// ends them.
func (h *Hub) remoteClock() (tick <-chan time.Time, changes, fleet <-chan struct{}, stop func()) {
	if h.claims == nil {
		return nil, nil, nil, func() {}
	}
	t := time.NewTicker(claims.ReadEvery)
	ctx, cancel := context.WithCancel(context.Background())
	if w, ok := h.claims.Backend.(claims.Watcher); ok {
		changes = w.Changes(ctx)
	}
	fleet = fleetWatch(ctx, h.claims)
	return t.C, changes, fleet, func() { t.Stop(); cancel() }
}

// changed is what a change to the tree calls for: the board and the inbox
// always, worktrees and the queue when a session shows them (git is asked
// about each worktree twice; a hidden pane is read when shown).
func (h *Hub) changed(c planfs.Change) kinds {
	k := kindBoard.set() | kindInbox.set() | kindFleet.set()
	problem := ""
	if c.Err != nil {
		// The watcher may have lost events: the scan looks again anyway.
		problem = c.Err.Error()
	}
	if problem != h.problem {
		h.problem = problem
		k |= kindProblem.set()
	}
	for _, w := range []kind{kindTrees, kindMerge} {
		if h.wanted(w) {
			k |= w.set()
		}
	}
	return k
}

// read does each reading in ks once and sends it out, the board first.
// It returns how long until the overlap radar may look again, when this
// reading of the workers had to go without it.
func (h *Hub) read(ks kinds) (radarDue time.Duration) {
	if ks.has(kindProblem) {
		h.send(kindProblem, hubProblemMsg{problem: h.problem})
	}
	if ks.has(kindBoard) {
		if h.claims != nil {
			h.send(kindBoard, h.readRemote())
		} else {
			h.send(kindBoard, loadBoard(h.tree))
		}
	}
	if ks.has(kindWorkers) {
		// The radar asks git merge-tree about every pair: at most every
		// radarEvery, whatever the number of sessions.
		radar := time.Since(h.radarAt) >= radarEvery
		if radar {
			h.radarAt = time.Now()
		} else {
			radarDue = radarEvery - time.Since(h.radarAt)
		}
		h.send(kindWorkers, readWorkers(h.tree.Project, radar))
	}
	if ks.has(kindInbox) {
		h.send(kindInbox, inboxDataMsg(readInbox(h.tree)))
	}
	if ks.has(kindFleet) {
		h.send(kindFleet, readFleet(h.tree))
	}
	if ks.has(kindTrees) {
		h.send(kindTrees, readWorktrees(h.tree.Project))
	}
	if ks.has(kindMerge) {
		h.mergeAt.Store(time.Now().UnixNano())
		h.send(kindMerge, readMerge(h.tree.Project))
	}
	return radarDue
}

// send keeps msg as the newest reading of its kind and puts it in every
// mailbox; no session can hold it up.
//
// A reading equal to the last of its kind is not sent: twenty sessions
// would each rebuild their rows for nothing. The board always goes (its
// clock moves).
func (h *Hub) send(k kind, msg tea.Msg) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if k != kindBoard && h.last[k] != nil && reflect.DeepEqual(h.last[k], msg) {
		return
	}
	h.last[k] = msg
	for mb := range h.subs {
		mb.put(k, msg)
	}
}

// wanted reports whether some session shows the pane reading k feeds.
func (h *Hub) wanted(k kind) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for mb := range h.subs {
		if kinds(mb.want.Load()).has(k) {
			return true
		}
	}
	return false
}

// mergeWatched reports whether the queue may change with nothing on disk
// saying so: a session shows it, or a check is running.
func (h *Hub) mergeWatched() bool {
	if h.wanted(kindMerge) {
		return true
	}
	h.mu.Lock()
	last, _ := h.last[kindMerge].(mergeMsg)
	h.mu.Unlock()
	for i := range last.listing.Items {
		if last.listing.Items[i].State == landing.Checking {
			return true
		}
	}
	return false
}

// poke asks for the readings in ks; many pokes before the hub looks are
// one reading.
func (h *Hub) poke(ks kinds) {
	h.poked.Or(uint32(ks))
	select {
	case h.pokeCh <- struct{}{}:
	default:
	}
}

// subscribe gives a session its mailbox, holding the newest readings
// there are, so a session opened later shows the board at once.
func (h *Hub) subscribe() *mailbox {
	mb := &mailbox{hub: h, ready: make(chan struct{}, 1), done: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		mb.end()
		return mb
	}
	for k, msg := range h.last {
		if msg != nil {
			mb.put(kind(k), msg)
		}
	}
	h.subs[mb] = true
	return mb
}

func (h *Hub) unsubscribe(mb *mailbox) {
	h.mu.Lock()
	delete(h.subs, mb)
	h.mu.Unlock()
	mb.end()
}

// mailbox is one session's place in a hub: the newest reading of each
// kind not yet taken, dropping older ones, and the panes it shows.
type mailbox struct {
	hub   *Hub
	mu    sync.Mutex
	slots [kindCount]tea.Msg
	ready chan struct{} // 1-buffered: something waits in the slots
	done  chan struct{} // closed when the session or the hub ends it
	once  sync.Once
	want  atomic.Uint32 // kinds read on a change only while shown
}

func (mb *mailbox) put(k kind, msg tea.Msg) {
	mb.mu.Lock()
	mb.slots[k] = msg
	mb.mu.Unlock()
	select {
	case mb.ready <- struct{}{}:
	default:
	}
}

// take empties the slots, in kind order.
func (mb *mailbox) take() hubMsg {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	var out hubMsg
	for k, msg := range mb.slots {
		if msg != nil {
			out = append(out, msg)
			mb.slots[k] = nil
		}
	}
	return out
}

func (mb *mailbox) end() { mb.once.Do(func() { close(mb.done) }) }

func (mb *mailbox) ended() bool {
	select {
	case <-mb.done:
		return true
	default:
		return false
	}
}

// show tells the hub which pane the session shows: worktrees and the
// queue are read on a change only while some session shows them.
func (mb *mailbox) show(p uictx.PaneID) {
	var w kinds
	switch p {
	case worktreesPane:
		w = kindTrees.set()
	case mergePane:
		w = kindMerge.set()
	}
	mb.want.Store(uint32(w))
}

func (mb *mailbox) poke(ks kinds) { mb.hub.poke(ks) }

func (mb *mailbox) close() { mb.hub.unsubscribe(mb) }

// waitHubCmd waits for the mailbox's next readings; like waitForChangeCmd
// it is issued again only when its own message arrives. An ended mailbox
// brings nothing more.
func waitHubCmd(mb *mailbox) tea.Cmd {
	return func() tea.Msg {
		for {
			select {
			case <-mb.ready:
			case <-mb.done:
			}
			if mb.ended() {
				return nil
			}
			// A signal left from readings already taken brings nothing.
			if msgs := mb.take(); len(msgs) > 0 {
				return msgs
			}
		}
	}
}

// arrived applies what a session took from its mailbox and waits for
// more.
func (f *hubFeed) arrived(m *Model, msgs hubMsg) tea.Cmd {
	mb := f.mb
	cmds := make([]tea.Cmd, 0, len(msgs)+1)
	for _, msg := range msgs {
		cmd, _ := m.updateData(msg)
		cmds = append(cmds, cmd)
	}
	// The readings a verb asked the hub for are in (or come next).
	m.settle.rereading = false
	cmds = append(cmds, m.settled(false))
	if !mb.ended() {
		cmds = append(cmds, waitHubCmd(mb))
	}
	return tea.Batch(cmds...)
}

// StopMsg tells a session's model the server is stopping: it shows Reason
// on its status line and quits.
type StopMsg struct{ Reason string }

// Shared is what the hub's sessions draw alike (Options.Hub).
func (h *Hub) Shared() (*kit.RowCache, *kit.LineMemo) { return h.rows, h.lines }

// hubOf is the hub opt brings, nil for none.
func hubOf(opt uictx.Options) *Hub {
	h, _ := opt.Hub.(*Hub)
	return h
}
