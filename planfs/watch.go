package planfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/fleetwatch/fleetwatch/internal/coalesce"
	"github.com/fleetwatch/fleetwatch/model"
)

// Change is one debounced burst of changes under .plans/ (or a problem watching it).
type Change struct {
	Err error // non-nil: the tree vanished or cannot be watched; the watcher keeps trying
	// Paths are the files that changed, absolute and sorted, when Full is
	// false. Full: more than RescanLimit paths, a lane or .leases/ came or
	// went, or events were lost; only a full scan tells what changed.
	Paths []string
	Full  bool
}

// Watcher reports changes to a tree through Changes until Close.
type Watcher struct {
	changes chan Change
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	err     error // fsnotify's close error, set before done is closed
}

// goneEvery is how often a watcher looks for a vanished .plans/ to come
// back; inotify cannot watch a path that does not exist.
const goneEvery = time.Second

// Watch starts watching the tree: .plans/ itself, every lane, .leases/ and
// logs/, and those directories again when they appear later. A burst of
// events becomes one Change once debounce/5 passes without another event
// (but not within debounce/2 of the last Change), or at the latest
// 4×debounce after the burst began, so a constant stream still refreshes.
// Each event's path is noted in the tree as it arrives, for Rescan. It fails only when the system cannot watch at all (no
// inotify instance, or .plans/ unwatchable); a .plans/ that is gone is
// reported on Changes and waited for.
func (t *Tree) Watch(debounce time.Duration) (*Watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("cannot watch %s: %v", t.Plans, watchErrText(err))
	}
	l := &watchLoop{tree: t, root: filepath.Clean(t.Plans), fw: fw, debounce: max(debounce, time.Millisecond)}
	gone := false
	if err := fw.Add(l.root); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			fw.Close()
			return nil, fmt.Errorf("cannot watch %s: %v", l.root, watchErrText(err))
		}
		gone = true
	}
	w := &Watcher{changes: make(chan Change, 1), stop: make(chan struct{}), done: make(chan struct{})}
	l.out = w.changes
	var problem error
	if !gone {
		problem = l.addDirs()
		// Counted before Watch returns, so the first Rescan after it may
		// already trust the watcher.
		l.count(problem == nil)
	}
	go w.run(l, gone, problem)
	return w, nil
}

// Changes delivers one Change per burst. It holds at most one: a Change not
// yet received absorbs later ones, so a slow reader never blocks the watcher
// and finds one message, not a backlog.
func (w *Watcher) Changes() <-chan Change { return w.changes }

// Close stops the watcher and waits for its goroutine, which closes the
// Changes channel on its way out. Calling it again does nothing.
func (w *Watcher) Close() error {
	w.once.Do(func() { close(w.stop) })
	<-w.done
	return w.err
}

// watchLoop is the state the watcher goroutine owns.
type watchLoop struct {
	tree     *Tree
	root     string
	fw       *fsnotify.Watcher
	out      chan Change
	debounce time.Duration
	// counted: the tree counts this watcher as seeing every change, so its
	// Rescan may read only the paths noted.
	counted bool
	// pending is the burst so far, for its Change.
	pending     map[string]bool
	pendingFull bool
	burst       *leadBurst
	// gone: the tree's folder went away; poll ticks until it is back.
	gone bool
	poll *time.Ticker
}

func (w *Watcher) run(l *watchLoop, gone bool, problem error) {
	defer close(w.done)
	defer close(w.changes)
	l.burst = newLeadBurst(l.debounce)
	defer l.burst.Cancel()
	defer l.count(false)
	defer l.stopPolling()
	if gone {
		l.setGone()
	} else if problem != nil {
		l.send(Change{Err: problem})
	}
	for {
		select {
		case <-w.stop:
			w.err = l.fw.Close()
			return
		case ev, ok := <-l.fw.Events:
			if !ok {
				return
			}
			l.onEvent(ev)
		case err, ok := <-l.fw.Errors:
			if !ok {
				return
			}
			l.onError(err)
		case <-l.burst.C():
			l.burst.Fired(time.Now())
			l.send(l.takePending())
		case <-l.pollC():
			l.pollRoot()
		}
	}
}

// setGone drops the burst and the watches of a tree whose folder went
// away, says so, and polls for its return.
func (l *watchLoop) setGone() {
	l.gone = true
	l.burst.Cancel()
	l.count(false)
	l.pending, l.pendingFull = nil, false
	for _, p := range l.fw.WatchList() {
		_ = l.fw.Remove(p)
	}
	l.send(Change{Err: l.goneErr()})
	l.poll = time.NewTicker(goneEvery)
}

// onEvent takes one fsnotify event into the burst, or notes the tree gone.
func (l *watchLoop) onEvent(ev fsnotify.Event) {
	switch {
	case l.gone:
		// the old tree's last events; its watches are gone
	case ev.Name == l.root && ev.Has(fsnotify.Remove|fsnotify.Rename):
		l.setGone()
	case l.event(ev):
		l.burst.Event(time.Now())
	}
}

// onError reports fsnotify's error: events may have been lost, so the
// next look is a full one.
func (l *watchLoop) onError(err error) {
	if l.gone {
		return
	}
	l.lost()
	l.send(Change{Err: fmt.Errorf("watching %s: %w", l.root, err), Full: true})
}

// pollC ticks while the tree is gone; nil (never) otherwise.
func (l *watchLoop) pollC() <-chan time.Time {
	if l.poll == nil {
		return nil
	}
	return l.poll.C
}

// pollRoot watches the tree again once its folder is back, with a full
// look.
func (l *watchLoop) pollRoot() {
	if err := l.fw.Add(l.root); err != nil {
		return
	}
	l.gone = false
	l.stopPolling()
	err := l.addDirs()
	l.count(err == nil)
	l.send(Change{Err: err, Full: true})
}

func (l *watchLoop) stopPolling() {
	if l.poll != nil {
		l.poll.Stop()
		l.poll = nil
	}
}

// event notes one fsnotify event; true when it is part of a burst.
func (l *watchLoop) event(ev fsnotify.Event) bool {
	if !l.matters(ev) {
		return false
	}
	if filepath.Dir(ev.Name) == l.root {
		// A lane, .leases/ or logs/ came or went: only a full scan knows
		// what it held.
		l.pendingFull, l.pending = true, nil
		l.tree.noteChanged("")
		if ev.Has(fsnotify.Create) {
			if err := l.addDir(ev.Name); err != nil {
				l.count(false)
				l.send(Change{Err: err, Full: true})
			}
		}
		return true
	}
	l.tree.noteChanged(ev.Name)
	switch {
	case l.pendingFull:
	case len(l.pending) >= RescanLimit:
		l.pendingFull, l.pending = true, nil
	default:
		if l.pending == nil {
			l.pending = map[string]bool{}
		}
		l.pending[ev.Name] = true
	}
	return true
}

// lost handles an overflow: events were dropped, perhaps a new lane's
// Create, so everything is read again and watched again.
func (l *watchLoop) lost() {
	l.tree.noteChanged("")
	l.pendingFull, l.pending = true, nil
	if err := l.addDirs(); err != nil {
		l.count(false)
	}
}

// takePending is the burst's Change, and starts the next burst empty.
func (l *watchLoop) takePending() Change {
	c := Change{Full: l.pendingFull}
	if !c.Full {
		c.Paths = make([]string, 0, len(l.pending))
		for p := range l.pending {
			c.Paths = append(c.Paths, p)
		}
		sort.Strings(c.Paths)
	}
	l.pending, l.pendingFull = nil, false
	return c
}

// count tells the tree whether this watcher sees every change.
func (l *watchLoop) count(on bool) {
	if on == l.counted || l.tree == nil {
		return
	}
	l.counted = on
	if on {
		l.tree.setWatched(1)
	} else {
		l.tree.setWatched(-1)
	}
}

// send never blocks: a Change still waiting in the channel is replaced by
// the newer one, so the reader sees the latest state (a tree that came
// back clears the error that it was gone); the paths of both are kept.
func (l *watchLoop) send(c Change) {
	select {
	case old := <-l.out:
		c = mergeChanges(old, c)
	default:
	}
	coalesce.Send(l.out, c)
}

// mergeChanges is newer standing for both: its error, both their paths.
// An error replaced still meant lost events, so the merge is Full.
func mergeChanges(old, newer Change) Change {
	newer.Full = newer.Full || old.Full || old.Err != nil
	if newer.Full || len(old.Paths)+len(newer.Paths) > RescanLimit {
		newer.Full, newer.Paths = true, nil
		return newer
	}
	seen := make(map[string]bool, len(newer.Paths))
	for _, p := range newer.Paths {
		seen[p] = true
	}
	for _, p := range old.Paths {
		if !seen[p] {
			newer.Paths = append(newer.Paths, p)
		}
	}
	sort.Strings(newer.Paths)
	return newer
}

func (l *watchLoop) goneErr() error {
	return fmt.Errorf("%s: %w (removed or renamed); watching for it to come back", l.root, fs.ErrNotExist)
}

// watchedDirs are the directories under .plans/ whose contents Scan and
// RecentEvents read.
func watchedDirs() []string {
	dirs := make([]string, 0, len(model.Lanes)+2)
	for _, lane := range model.Lanes {
		dirs = append(dirs, string(lane))
	}
	return append(dirs, ".leases", "logs")
}

// addDirs watches every directory of watchedDirs that exists, returning the
// first one that cannot be watched.
func (l *watchLoop) addDirs() error {
	var first error
	for _, d := range watchedDirs() {
		if err := l.addDir(filepath.Join(l.root, d)); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// addDir watches p if it is one of watchedDirs and a real directory. A
// symlinked lane is left alone: Scan skips it, and a watch would follow it
// out of the tree.
func (l *watchLoop) addDir(p string) error {
	if !isWatchedDir(filepath.Base(p)) {
		return nil
	}
	fi, err := os.Lstat(p)
	if err != nil || !fi.IsDir() {
		return nil // not there (yet): its Create will bring it
	}
	if err := l.fw.Add(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot watch %s: %v", p, watchErrText(err))
	}
	return nil
}

func isWatchedDir(name string) bool {
	if name == ".leases" || name == "logs" {
		return true
	}
	_, ok := model.ParseLane(name)
	return ok
}

// matters reports whether ev can change what Scan or RecentEvents return.
// Everything else is dropped so that workers taking the lease lock, writing
// temp files, or a backup tool touching modes leave an idle UI idle.
func (l *watchLoop) matters(ev fsnotify.Event) bool {
	if ev.Op&^fsnotify.Chmod == 0 {
		return false
	}
	dir, name := filepath.Dir(ev.Name), filepath.Base(ev.Name)
	switch {
	case dir == l.root:
		return isWatchedDir(name) // a lane, .leases/ or logs/ came or went
	case dir == filepath.Join(l.root, ".leases"):
		// .lock, .tmp-* and .stale-* are the lease protocol's own files; the
		// lease it changes always shows up under its real name too.
		return !strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".json")
	case dir == filepath.Join(l.root, "logs"):
		return name == filepath.Base(EventsFile)
	case filepath.Dir(dir) == l.root:
		_, lane := model.ParseLane(filepath.Base(dir))
		return lane && strings.HasSuffix(name, ".md") && name != "README.md"
	}
	return false
}

// watchErrText adds a hint to the inotify limits, whose errno texts
// ("no space left on device", "too many open files") mislead.
func watchErrText(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "inotify watch limit reached (raise fs.inotify.max_user_watches)"
	case errors.Is(err, syscall.EMFILE):
		return "inotify instance limit reached (raise fs.inotify.max_user_instances)"
	}
	return errText(err)
}

// leadBurst is coalesce.Burst with a short quiet period and a rate limit:
// a burst ends once lead passes without another event (the few events of
// one save arrive within microseconds), so a single edit reaches the
// screen at once; bursts fire at most once per debounce/2, and any burst
// at the latest 4×debounce after it began, so a steady stream still
// refreshes without refreshing all the time.
type leadBurst struct {
	quiet, lead time.Duration
	timer       *time.Timer
	start       time.Time // first event of the pending burst; zero when none
	fired       time.Time // when the last burst fired
}

// leadFraction of the debounce is the quiet that ends a burst.
const leadFraction = 5

func newLeadBurst(quiet time.Duration) *leadBurst {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &leadBurst{quiet: quiet, lead: max(quiet/leadFraction, time.Millisecond), timer: t}
}

func (b *leadBurst) C() <-chan time.Time { return b.timer.C }

// Event records an event at now.
func (b *leadBurst) Event(now time.Time) {
	if b.start.IsZero() {
		b.start = now
	}
	due := now.Add(b.lead)
	if floor := b.fired.Add(b.quiet / 2); due.Before(floor) {
		due = floor
	}
	if limit := b.start.Add(4 * b.quiet); due.After(limit) {
		due = limit
	}
	b.timer.Reset(due.Sub(now))
}

// Fired ends the burst that C reported, at now.
func (b *leadBurst) Fired(now time.Time) { b.start, b.fired = time.Time{}, now }

// Cancel drops a pending burst without firing.
func (b *leadBurst) Cancel() {
	b.start = time.Time{}
	b.timer.Stop()
}
