package look

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

	"github.com/fleetwatch/fleetwatch/internal/coalesce"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// StateChange is one debounced burst of changes to the state files, or a
// problem watching them.
type StateChange struct {
	Err error
}

// StateWatcher reports changes to a project's state files until Close.
type StateWatcher struct {
	changes chan StateChange
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// WatchStates watches project's StateDir with fsnotify. The directory
// need not exist: until it does, the nearest existing folder on the way
// to it is watched, and its coming (or going) is a change too. A burst of
// events becomes one StateChange once debounce passes without another, or
// at the latest 4×debounce after the burst began.
func WatchStates(project string, debounce time.Duration) (*StateWatcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("cannot watch worker states: %v", err)
	}
	l := &stateLoop{
		folderWatch: folderWatch{
			stop:   filepath.Clean(project),
			target: filepath.Join(filepath.Clean(project), filepath.FromSlash(StateDir)),
			fw:     fw,
		},
		debounce: max(debounce, time.Millisecond),
	}
	if err := l.climb(); err != nil {
		fw.Close()
		return nil, err
	}
	w := &StateWatcher{changes: make(chan StateChange, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go w.run(l)
	return w, nil
}

// Changes delivers one StateChange per burst; one not yet received absorbs
// later ones.
func (w *StateWatcher) Changes() <-chan StateChange { return w.changes }

// Close stops the watcher and waits for its goroutine, which closes
// Changes. Calling it again does nothing.
func (w *StateWatcher) Close() error {
	w.once.Do(func() { close(w.stop) })
	<-w.done
	return nil
}

type stateLoop struct {
	folderWatch
	debounce time.Duration
}

// folderWatch keeps an fsnotify watch on a folder that may not exist yet,
// or may go and come back: until it exists, the nearest existing folder on
// the way to it, up to stop, is watched instead.
type folderWatch struct {
	stop, target string
	watched      string // the folder watched now: target or an ancestor
	fw           *fsnotify.Watcher
}

// climb watches target, or the nearest of its ancestors up to stop that
// exists.
func (l *folderWatch) climb() error {
	for tries := 0; ; tries++ {
		if l.watched != "" {
			_ = l.fw.Remove(l.watched)
			l.watched = ""
		}
		below, err := l.watchNearest()
		if err != nil {
			return err
		}
		// The folder below the one watched may have come between its
		// failed Add and this one, unseen by either: look again.
		if fi, err := os.Stat(below); below == "" || err != nil || !fi.IsDir() || tries == 2 {
			return nil
		}
	}
}

// watchNearest watches target, or the nearest of its ancestors up to stop
// that exists, and returns the folder on the way below the one watched
// ("" when that is target).
func (l *folderWatch) watchNearest() (below string, err error) {
	for dir := l.target; ; below, dir = dir, filepath.Dir(dir) {
		err := l.fw.Add(dir)
		if err == nil {
			l.watched = dir
			return below, nil
		}
		missing := errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
		if !missing || dir == l.stop || dir == filepath.Dir(dir) {
			return "", fmt.Errorf("cannot watch %s: %v", dir, tree.ErrText(err))
		}
	}
}

// onTheWay reports whether ev changes the way to the folder: the watched
// folder itself went, or, while an ancestor is watched, the next folder on
// the way came or went.
func (l *folderWatch) onTheWay(ev fsnotify.Event) bool {
	if ev.Op&^fsnotify.Chmod == 0 {
		return false
	}
	name := filepath.Clean(ev.Name)
	if name == l.watched {
		return true
	}
	return l.watched != l.target && strings.HasPrefix(l.target+string(filepath.Separator), name+string(filepath.Separator))
}

// matters reports whether ev changes what ReadStates returns, or the way
// to the state folder.
func (l *stateLoop) matters(ev fsnotify.Event) bool {
	if ev.Op&^fsnotify.Chmod == 0 {
		return false
	}
	if l.onTheWay(ev) {
		return true
	}
	name := filepath.Clean(ev.Name)
	return l.watched == l.target && filepath.Dir(name) == l.target && strings.HasSuffix(name, ".json") && !strings.HasPrefix(filepath.Base(name), ".")
}

func (w *StateWatcher) run(l *stateLoop) {
	defer close(w.done)
	defer close(w.changes)
	burst := coalesce.NewBurst(l.debounce)
	defer burst.Cancel()
	for {
		select {
		case <-w.stop:
			l.fw.Close()
			return
		case ev, ok := <-l.fw.Events:
			if !ok {
				return
			}
			if !l.matters(ev) {
				continue
			}
			if l.watched != l.target || filepath.Clean(ev.Name) == l.watched {
				// The way to the folder changed: watch the nearest part
				// of it again.
				if err := l.climb(); err != nil {
					w.send(StateChange{Err: err})
				}
			}
			burst.Event(time.Now())
		case err, ok := <-l.fw.Errors:
			if !ok {
				return
			}
			w.send(StateChange{Err: fmt.Errorf("watching %s: %w", l.target, err)})
		case <-burst.C():
			burst.Fired()
			w.send(StateChange{})
		}
	}
}

// send never blocks: a change still waiting is replaced by the newer one.
func (w *StateWatcher) send(c StateChange) { coalesce.Send(w.changes, c) }
