package planfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"fleetwatch/internal/coalesce"
	"fleetwatch/model"
)

// Change is one debounced burst of changes under .plans/ (or a problem watching it).
type Change struct {
	Err error // non-nil: the tree vanished or cannot be watched; the watcher keeps trying
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
// events becomes one Change once debounce passes without another event, or
// at the latest 4×debounce after the burst began, so a constant stream
// still refreshes. It fails only when the system cannot watch at all (no
// inotify instance, or .plans/ unwatchable); a .plans/ that is gone is
// reported on Changes and waited for.
func (t *Tree) Watch(debounce time.Duration) (*Watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("cannot watch %s: %v", t.Plans, watchErrText(err))
	}
	l := &watchLoop{root: filepath.Clean(t.Plans), fw: fw, debounce: max(debounce, time.Millisecond)}
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
	root     string
	fw       *fsnotify.Watcher
	out      chan Change
	debounce time.Duration
}

func (w *Watcher) run(l *watchLoop, gone bool, problem error) {
	defer close(w.done)
	defer close(w.changes)
	burst := coalesce.NewBurst(l.debounce)
	defer burst.Cancel()
	var (
		poll  *time.Ticker
		pollC <-chan time.Time
	)
	setGone := func() {
		gone = true
		burst.Cancel()
		for _, p := range l.fw.WatchList() {
			_ = l.fw.Remove(p)
		}
		l.send(Change{Err: l.goneErr()})
		poll = time.NewTicker(goneEvery)
		pollC = poll.C
	}
	if gone {
		setGone()
	} else if problem != nil {
		l.send(Change{Err: problem})
	}
	defer func() {
		if poll != nil {
			poll.Stop()
		}
	}()
	for {
		select {
		case <-w.stop:
			w.err = l.fw.Close()
			return
		case ev, ok := <-l.fw.Events:
			if !ok {
				return
			}
			if gone {
				continue // the old tree's last events; its watches are gone
			}
			if ev.Name == l.root && ev.Has(fsnotify.Remove|fsnotify.Rename) {
				setGone()
				continue
			}
			if !l.matters(ev) {
				continue
			}
			if ev.Has(fsnotify.Create) && filepath.Dir(ev.Name) == l.root {
				if err := l.addDir(ev.Name); err != nil {
					l.send(Change{Err: err})
				}
			}
			burst.Event(time.Now())
		case err, ok := <-l.fw.Errors:
			if !ok {
				return
			}
			if gone {
				continue
			}
			l.send(Change{Err: fmt.Errorf("watching %s: %w", l.root, err)})
			// An overflow may have swallowed a new lane's Create.
			_ = l.addDirs()
		case <-burst.C():
			burst.Fired()
			l.send(Change{})
		case <-pollC:
			if err := l.fw.Add(l.root); err != nil {
				continue
			}
			gone = false
			poll.Stop()
			poll, pollC = nil, nil
			l.send(Change{Err: l.addDirs()})
		}
	}
}

// send never blocks: a Change still waiting in the channel is replaced by
// the newer one, so the reader sees the latest state (a tree that came
// back clears the error that it was gone) and plain changes merge.
func (l *watchLoop) send(c Change) { coalesce.Send(l.out, c) }

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
