package contain

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/fsnotify/fsnotify"

	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// WriteWatch follows the writes in a running build's worktree as they
// happen (inotify, one watch per folder), beside the scanner's periodic
// `git status`: a file created and deleted between two scans, or one git
// ignores, is still a path the build touched.
type WriteWatch struct {
	w    *fsnotify.Watcher
	root string
	done chan struct{}

	mu   sync.Mutex
	seen map[string]bool // files written, relative to root
	dirs map[string]bool // folders watched: never a touched path themselves; past maxWatchDirs, git's look alone
}

// maxWatchDirs bounds the inotify watches one worktree takes (the kernel's
// default per user is 8192 on some systems, more on others).
const maxWatchDirs = 4096

// maxSeen bounds the paths remembered: an agent writing millions of files
// costs the driver a bounded map; past it, git's look alone counts.
const maxSeen = 1 << 16

// WatchWrites starts watching root; nil when inotify is not available, and
// the scanner relies on git alone.
func WatchWrites(root string) *WriteWatch {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil
	}
	ww := &WriteWatch{w: w, root: root, done: make(chan struct{}), seen: map[string]bool{}, dirs: map[string]bool{}}
	ww.addTree(root, false)
	go ww.loop()
	return ww
}

// addTree watches dir and the folders below it, but no .git; fresh says
// the tree was just created, so its files are writes too.
func (ww *WriteWatch) addTree(dir string, fresh bool) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel := ww.rel(p)
		if rel == ".git" || strings.HasPrefix(rel, ".git/") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			if fresh {
				ww.note(p)
			}
			return nil
		}
		ww.mu.Lock()
		full := len(ww.dirs) >= maxWatchDirs
		if !full {
			ww.dirs[rel] = true
		}
		ww.mu.Unlock()
		if full {
			return filepath.SkipAll
		}
		_ = ww.w.Add(p)
		return nil
	})
}

func (ww *WriteWatch) loop() {
	defer close(ww.done)
	for {
		select {
		case ev, ok := <-ww.w.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
					ww.addTree(ev.Name, true)
					continue
				}
			}
			ww.note(ev.Name)
		case _, ok := <-ww.w.Errors:
			if !ok {
				return
			}
			// An overflowed queue loses events; git's next look still
			// sees what is there.
		}
	}
}

// rel is p relative to the worktree, with slashes; "" for the root itself.
func (ww *WriteWatch) rel(p string) string {
	rel, err := filepath.Rel(ww.root, p)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	return filepath.ToSlash(rel)
}

// note records a write to p, unless it is the worktree's git link or
// fleetwatch's own .env.fleetwatch.
func (ww *WriteWatch) note(p string) {
	rel := ww.rel(p)
	if rel == "" || rel == ".git" || strings.HasPrefix(rel, ".git/") || rel == tree.EnvFile {
		return
	}
	ww.mu.Lock()
	if !ww.dirs[rel] && len(ww.seen) < maxSeen {
		ww.seen[rel] = true
	}
	ww.mu.Unlock()
}

// Paths are the files and folders written since the watch began, sorted.
func (ww *WriteWatch) Paths() []string {
	if ww == nil {
		return nil
	}
	ww.mu.Lock()
	defer ww.mu.Unlock()
	out := make([]string, 0, len(ww.seen))
	for p := range ww.seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

func (ww *WriteWatch) close() {
	if ww == nil {
		return
	}
	ww.w.Close()
	<-ww.done
}
