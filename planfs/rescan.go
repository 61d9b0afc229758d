package planfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
)

// RescanLimit is how many changed paths one Rescan reads by name; a burst
// of more (a branch switch, a bulk move) is read by a full scan, which
// costs about the same and needs no bookkeeping.
const RescanLimit = 256

// fullEvery bounds how long Rescan trusts the watcher alone: what inotify
// does not report (a chmod, a lane made unreadable) shows within it.
const fullEvery = time.Minute

// dirtySet is what changed since the last scan, as the watcher saw it.
type dirtySet struct {
	full  bool // read everything: too many paths, lost events, a lane came or went
	paths map[string]bool
	// watchers counts the running watchers that see every change; with none
	// a Rescan cannot know what changed and scans in full.
	watchers int
}

// takeDirty empties the dirty set, returning it; mu is taken here.
func (t *Tree) takeDirty() (paths map[string]bool, full bool, watched bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	paths, full = t.dirty.paths, t.dirty.full
	t.dirty.paths, t.dirty.full = nil, false
	return paths, full, t.dirty.watchers > 0
}

// noteChanged records a path the watcher saw change; "" means the next
// Rescan must read everything.
func (t *Tree) noteChanged(p string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.dirty.full:
	case p == "" || len(t.dirty.paths) >= RescanLimit:
		t.dirty.full, t.dirty.paths = true, nil
	default:
		if t.dirty.paths == nil {
			t.dirty.paths = map[string]bool{}
		}
		t.dirty.paths[p] = true
	}
}

// setWatched counts a watcher that sees every change in (delta 1) or out
// (-1). Both ways the next Rescan reads everything: what happened while
// nobody watched is unknown.
func (t *Tree) setWatched(delta int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dirty.watchers += delta
	t.dirty.full, t.dirty.paths = true, nil
}

// Rescan is Scan for a tree a Watcher watches: it reads again only the
// files the watcher saw change since the last scan, and returns what a full
// Scan would. Without a watcher, after lost events, a burst of more than
// RescanLimit paths, a lane or .leases/ coming or going, or fullEvery after
// the last full scan, it is a full Scan.
func (t *Tree) Rescan() (*model.Snapshot, error) {
	t.scanMu.Lock()
	defer t.scanMu.Unlock()
	base := t.base
	if base == nil || time.Since(base.at) > fullEvery {
		return t.fullScan()
	}
	paths, full, watched := t.takeDirty()
	if full || !watched {
		return t.fullScan()
	}
	if _, err := os.Stat(t.Plans); err != nil {
		t.noteChanged("") // whatever comes back is read in full
		return nil, err
	}
	buf := make([]byte, HeaderLimit)
	for p := range paths {
		if !t.rescanPath(base, p, buf) {
			return t.fullScan() // what was read so far serves as its cache
		}
	}
	t.rereadSymlinks(base, buf)
	return base.snapshot(), nil
}

// rescanPath brings the base up to date for one changed path; false means
// the path is not one it can read alone.
func (t *Tree) rescanPath(b *scanBase, p string, buf []byte) bool {
	rel, err := filepath.Rel(t.Plans, p)
	if err != nil {
		return false
	}
	dir, name := filepath.Split(filepath.ToSlash(rel))
	dir = strings.TrimSuffix(dir, "/")
	switch {
	case dir == "logs":
		return true // the event log is not part of a scan
	case dir == ".leases":
		t.rescanLease(b, name)
		return true
	case dir == "" || strings.Contains(dir, "/"):
		return false
	}
	lane, ok := model.ParseLane(dir)
	if !ok {
		return false
	}
	return t.rescanPlan(&b.lanes[laneIndex(lane)], lane, p, name, buf)
}

// rescanPlan reads the plan file p (name in lane's ls) again, or drops it
// when it is gone; false when only a full scan can tell.
func (t *Tree) rescanPlan(ls *laneScan, lane model.Lane, p, name string, buf []byte) bool {
	if ls.warn != nil {
		return false // a lane skipped as a whole; only a full scan says more
	}
	var it *scanItem
	if fi, err := os.Lstat(p); err == nil {
		it = newScanItem(lane, filepath.Dir(p), name, fi.Mode().Type())
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if it != nil && it.listWarn == "" {
		t.readItem(it, nil, buf)
	}
	ls.items = replaceSorted(ls.items, name, it, func(it *scanItem) string { return it.name })
	return true
}

// rescanLease reads one lease file again, or drops it when it is gone.
func (t *Tree) rescanLease(b *scanBase, name string) {
	dir := filepath.Join(t.Plans, ".leases")
	var it *leaseItem
	if fi, err := os.Lstat(filepath.Join(dir, name)); err == nil {
		it = t.readLeaseItem(dir, name, fi.IsDir())
	}
	b.leases = replaceSorted(b.leases, name, it, func(it *leaseItem) string { return it.name })
}

// rereadSymlinks reads every symlinked plan again: its target can change
// without an event on the link.
func (t *Tree) rereadSymlinks(b *scanBase, buf []byte) {
	for _, ls := range b.lanes {
		for i, it := range ls.items {
			if !it.regular && it.listWarn == "" {
				fresh := &scanItem{lane: it.lane, name: it.name, path: it.path}
				t.readItem(fresh, it, buf)
				ls.items[i] = fresh
			}
		}
	}
}

// replaceSorted puts it in place of the element named name in s, sorted by
// name; a nil it removes the element.
func replaceSorted[T any](s []*T, name string, it *T, nameOf func(*T) string) []*T {
	i, found := slices.BinarySearchFunc(s, name, func(e *T, name string) int { return strings.Compare(nameOf(e), name) })
	switch {
	case found && it != nil:
		s[i] = it
	case found:
		s = slices.Delete(s, i, i+1)
	case it != nil:
		s = slices.Insert(s, i, it)
	}
	return s
}
