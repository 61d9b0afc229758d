// Package feed owns how the cockpit's readings reach a served project's
// sessions: one Hub watches the tree and the workers' state files once,
// reads each change once, and fans the readings out to every session's
// Mailbox. What a reading is (a scan judged, git's look at the worktrees,
// the state files, the queue, the inbox, the spend) is the cockpit's:
// it hands the hub its readers (Readers), so this package knows the kinds
// of reading and when each is due, never the Model or a pane.
package feed

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
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// Kind is one of the readings a hub sends; each mailbox keeps only the
// newest of each.
type Kind uint8

const (
	Board Kind = iota
	Trees
	Workers
	Merge
	Inbox
	Fleet
	Problem
	KindCount
)

// Kinds is a set of readings, one bit per kind.
type Kinds uint32

// Set is the set holding k alone.
func (k Kind) Set() Kinds { return 1 << k }

// Has reports whether k is in s.
func (s Kinds) Has(k Kind) bool { return s&k.Set() != 0 }

// AllKinds is every reading.
const AllKinds = Kinds(1<<KindCount - 1)

// Msgs is what a session took from its mailbox: the newest of each
// reading that came since it last looked, in kind order (the board first).
type Msgs []tea.Msg

// Readers are the cockpit's readings, each run on the hub's goroutine
// only, so a reader may keep state of its own (the last good board).
type Readers struct {
	Board   func() tea.Msg
	Workers func(radar bool) tea.Msg
	Trees   func() tea.Msg
	Merge   func() tea.Msg
	Inbox   func() tea.Msg
	Fleet   func() tea.Msg
	// Problem is the message saying the watchers' trouble ("": none).
	Problem func(string) tea.Msg
	// Checking reports whether a queue reading has a check running: the
	// queue is then read on the clock with no session showing it.
	Checking func(merge tea.Msg) bool
	// RadarEvery is the least time between two looks of the overlap
	// radar; MergeEvery how often a watched queue is read again.
	RadarEvery, MergeEvery time.Duration
	// Forge, when set, reads the project's forge (the network: seconds,
	// or never an answer) at start and every ForgeEvery, on a goroutine of
	// its own, bounded by its context; the queue and the inbox are read
	// again after each.
	Forge      func(ctx context.Context)
	ForgeEvery time.Duration
}

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
	read   Readers

	mu     sync.Mutex
	subs   map[*Mailbox]bool
	last   [KindCount]tea.Msg // the newest of each reading, for a session that comes later
	closed bool

	poked  atomic.Uint32 // the kinds asked for since the last reading
	pokeCh chan struct{} // 1-buffered: a poke is waiting
	quit   chan struct{}
	done   chan struct{}
	once   sync.Once

	watcher *planfs.Watcher
	states  *look.StateWatcher
	problem string // the watchers' trouble, as the header says it
	radarAt time.Time

	readAt [KindCount]atomic.Int64 // when each kind was last read, Unix nanoseconds

	rows  *kit.RowCache // the panes' rows, rendered once for the sessions alike
	lines *kit.LineMemo // the frames' lines, laid out once
}

// NewHub starts watching t for many sessions, reading with r; c is the
// remote claims backend (nil: the lease files): the board is then read on
// a claims.ReadEvery timer, on c's word of a change (claims.Watcher,
// claims.FleetWatcher) and on every change to the tree. A watcher that
// cannot start is said in every session's header, as the local UI says
// it.
func NewHub(t *planfs.Tree, c *claims.Opened, r Readers, debounce time.Duration) *Hub {
	if c != nil && c.Backend == nil {
		c = nil
	}
	h := &Hub{
		tree: t, claims: c, read: r, subs: map[*Mailbox]bool{}, rows: kit.NewRowCache(), lines: kit.NewLineMemo(),
		pokeCh: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
	}
	w, err := t.Watch(debounce)
	if err != nil {
		h.problem = "not watching for changes: " + err.Error()
	} else {
		h.watcher = w
	}
	sw, err := look.WatchStates(t.Project, debounce)
	if err != nil {
		h.problem = "not watching workers: " + err.Error()
	} else {
		h.states = sw
	}
	go h.run()
	if r.Forge != nil && r.ForgeEvery > 0 {
		go h.readForge()
	}
	return h
}

// readForge reads the forge at start and on its clock, one reading at a
// time, until the hub closes (which ends a reading in flight).
func (h *Hub) readForge() {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-h.quit:
		case <-ctx.Done():
		}
		cancel()
	}()
	defer cancel()
	tick := time.NewTicker(h.read.ForgeEvery)
	defer tick.Stop()
	for {
		h.read.Forge(ctx)
		h.Poke(Merge.Set() | Inbox.Set())
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Claims is the remote claims backend the hub reads; nil for lease files.
func (h *Hub) Claims() *claims.Opened { return h.claims }

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
	mergeTick := time.NewTicker(h.read.MergeEvery)
	defer mergeTick.Stop()
	remoteTick, remoteChanges, fleetChanges, stop := h.remoteClock()
	defer stop()
	var radar <-chan time.Time
	pending := AllKinds // the first reading: everything
	for {
		if pending != 0 {
			if due := h.readAll(pending); due > 0 && radar == nil {
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
			pending |= Workers.Set() | Fleet.Set()
		case <-h.pokeCh:
			pending |= Kinds(h.poked.Swap(0))
		case <-mergeTick.C:
			if h.mergeWatched() {
				pending |= Merge.Set()
			}
		case <-radar:
			radar = nil
			pending |= Workers.Set()
		case <-remoteTick:
			pending |= Board.Set()
		case _, ok := <-remoteChanges:
			if !ok {
				remoteChanges = nil
				continue
			}
			pending |= Board.Set()
		case _, ok := <-fleetChanges:
			if !ok {
				fleetChanges = nil
				continue
			}
			// The board's reading carries the worker records.
			pending |= Board.Set()
		}
	}
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
	fleet = FleetWatch(ctx, h.claims)
	return t.C, changes, fleet, func() { t.Stop(); cancel() }
}

// FleetWatch is c's word on worker records' changes, nil when it says
// none.
func FleetWatch(ctx context.Context, c *claims.Opened) <-chan struct{} {
	if w, ok := c.Backend.(claims.FleetWatcher); ok {
		return w.FleetChanges(ctx)
	}
	return nil
}

// changed is what a change to the tree calls for: the board and the inbox
// always, worktrees and the queue when a session shows them (git is asked
// about each worktree twice; a hidden pane is read when shown).
func (h *Hub) changed(c planfs.Change) Kinds {
	k := Board.Set() | Inbox.Set() | Fleet.Set()
	problem := ""
	if c.Err != nil {
		// The watcher may have lost events: the scan looks again anyway.
		problem = c.Err.Error()
	}
	if problem != h.problem {
		h.problem = problem
		k |= Problem.Set()
	}
	for _, w := range []Kind{Trees, Merge} {
		if h.wanted(w) {
			k |= w.Set()
		}
	}
	return k
}

// readAll does each reading in ks once and sends it out, the board first.
// It returns how long until the overlap radar may look again, when this
// reading of the workers had to go without it.
func (h *Hub) readAll(ks Kinds) (radarDue time.Duration) {
	if ks.Has(Problem) {
		h.send(Problem, h.read.Problem(h.problem))
	}
	if ks.Has(Board) {
		h.send(Board, h.read.Board())
	}
	if ks.Has(Workers) {
		// The radar asks git merge-tree about every pair: at most every
		// RadarEvery, whatever the number of sessions.
		radar := time.Since(h.radarAt) >= h.read.RadarEvery
		if radar {
			h.radarAt = time.Now()
		} else {
			radarDue = h.read.RadarEvery - time.Since(h.radarAt)
		}
		h.send(Workers, h.read.Workers(radar))
	}
	for _, k := range []Kind{Inbox, Fleet, Trees, Merge} {
		if ks.Has(k) {
			h.readAt[k].Store(time.Now().UnixNano())
			h.send(k, h.reader(k)())
		}
	}
	return radarDue
}

func (h *Hub) reader(k Kind) func() tea.Msg {
	switch k {
	case Inbox:
		return h.read.Inbox
	case Fleet:
		return h.read.Fleet
	case Trees:
		return h.read.Trees
	}
	return h.read.Merge
}

// send keeps msg as the newest reading of its kind and puts it in every
// mailbox; no session can hold it up.
//
// A reading equal to the last of its kind is not sent: twenty sessions
// would each rebuild their rows for nothing. The board always goes (its
// clock moves).
func (h *Hub) send(k Kind, msg tea.Msg) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if k != Board && h.last[k] != nil && reflect.DeepEqual(h.last[k], msg) {
		return
	}
	h.last[k] = msg
	for mb := range h.subs {
		mb.put(k, msg)
	}
}

// wanted reports whether some session shows the pane reading k feeds.
func (h *Hub) wanted(k Kind) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for mb := range h.subs {
		if Kinds(mb.want.Load()).Has(k) {
			return true
		}
	}
	return false
}

// mergeWatched reports whether the queue may change with nothing on disk
// saying so: a session shows it, or a check is running.
func (h *Hub) mergeWatched() bool {
	if h.wanted(Merge) {
		return true
	}
	h.mu.Lock()
	last := h.last[Merge]
	h.mu.Unlock()
	return last != nil && h.read.Checking(last)
}

// Poke asks for the readings in ks; many pokes before the hub looks are
// one reading.
func (h *Hub) Poke(ks Kinds) {
	h.poked.Or(uint32(ks))
	select {
	case h.pokeCh <- struct{}{}:
	default:
	}
}

// PokeOlder asks for reading k unless it was read within age: the
// overviews of many served sessions read it once.
func (h *Hub) PokeOlder(k Kind, age time.Duration) {
	if time.Since(time.Unix(0, h.readAt[k].Load())) >= age {
		h.Poke(k.Set())
	}
}

// Subscribe gives a session its mailbox, holding the newest readings
// there are, so a session opened later shows the board at once.
func (h *Hub) Subscribe() *Mailbox {
	mb := &Mailbox{hub: h, ready: make(chan struct{}, 1), done: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		mb.end()
		return mb
	}
	for k, msg := range h.last {
		if msg != nil {
			mb.put(Kind(k), msg)
		}
	}
	h.subs[mb] = true
	return mb
}

func (h *Hub) unsubscribe(mb *Mailbox) {
	h.mu.Lock()
	delete(h.subs, mb)
	h.mu.Unlock()
	mb.end()
}

// Shared is what the hub's sessions draw alike (Options.Hub).
func (h *Hub) Shared() (*kit.RowCache, *kit.LineMemo) { return h.rows, h.lines }

// Mailbox is one session's place in a hub: the newest reading of each
// kind not yet taken, dropping older ones, and the panes it shows.
type Mailbox struct {
	hub   *Hub
	mu    sync.Mutex
	slots [KindCount]tea.Msg
	ready chan struct{} // 1-buffered: something waits in the slots
	done  chan struct{} // closed when the session or the hub ends it
	once  sync.Once
	want  atomic.Uint32 // kinds read on a change only while shown
}

func (mb *Mailbox) put(k Kind, msg tea.Msg) {
	mb.mu.Lock()
	mb.slots[k] = msg
	mb.mu.Unlock()
	select {
	case mb.ready <- struct{}{}:
	default:
	}
}

// Take empties the slots, in kind order.
func (mb *Mailbox) Take() Msgs {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	var out Msgs
	for k, msg := range mb.slots {
		if msg != nil {
			out = append(out, msg)
			mb.slots[k] = nil
		}
	}
	return out
}

func (mb *Mailbox) end() { mb.once.Do(func() { close(mb.done) }) }

// Ended reports whether the session or the hub ended the mailbox.
func (mb *Mailbox) Ended() bool {
	select {
	case <-mb.done:
		return true
	default:
		return false
	}
}

// Want tells the hub which readings the session shows: worktrees and the
// queue are read on a change only while some session shows them.
func (mb *Mailbox) Want(ks Kinds) { mb.want.Store(uint32(ks)) }

// Poke asks the hub for the readings in ks.
func (mb *Mailbox) Poke(ks Kinds) { mb.hub.Poke(ks) }

// Close leaves the hub.
func (mb *Mailbox) Close() { mb.hub.unsubscribe(mb) }

// Wait waits for the mailbox's next readings, as Msgs; like a watcher's
// wait it is issued again only when its own message arrives. An ended
// mailbox brings nothing more.
func (mb *Mailbox) Wait() tea.Cmd {
	return func() tea.Msg {
		for {
			select {
			case <-mb.ready:
			case <-mb.done:
			}
			if mb.Ended() {
				return nil
			}
			// A signal left from readings already taken brings nothing.
			if msgs := mb.Take(); len(msgs) > 0 {
				return msgs
			}
		}
	}
}
