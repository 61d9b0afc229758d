package planfs

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"
)

// waitPlain waits for the next Change, which must carry no error.
func waitPlain(t *testing.T, w *Watcher, what string) Change {
	t.Helper()
	c, ok := nextChange(t, w, 5*time.Second)
	if !ok {
		t.Fatalf("%s: no Change", what)
	}
	if c.Err != nil {
		t.Fatalf("%s: %v", what, c.Err)
	}
	return c
}

// A Change names the files that changed, so the UI rescans only those.
func TestWatchChangeCarriesPaths(t *testing.T) {
	t.Parallel()
	tr := mkTree(t, "features/a.md:")
	w := startWatch(t, tr)
	settle(t, w)
	a, b := tr.Abs("features/a.md"), tr.Abs("bugs/b.md")
	for _, p := range []string{b, a} {
		if err := os.WriteFile(p, []byte("# x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// What the lease protocol writes for itself is no path of a Change.
	if err := os.WriteFile(tr.Abs(".leases/.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 2 {
		c := waitPlain(t, w, "two writes")
		if c.Full {
			t.Fatalf("two writes made a Full Change")
		}
		got = append(got, c.Paths...)
	}
	if want := []string{b, a}; !reflect.DeepEqual(got, []string{a, b}) && !reflect.DeepEqual(got, want) {
		t.Fatalf("paths %v, want %v", got, []string{a, b})
	}
}

// A lane that comes or goes, or more paths than RescanLimit, make a Full
// Change: only a full scan knows what a new lane holds.
func TestWatchFullChanges(t *testing.T) {
	t.Parallel()
	tr := mkTree(t)
	if err := os.RemoveAll(tr.Abs("blocked")); err != nil {
		t.Fatal(err)
	}
	w := startWatch(t, tr)
	settle(t, w)
	if err := os.Mkdir(tr.Abs("blocked"), 0o755); err != nil {
		t.Fatal(err)
	}
	if c := waitPlain(t, w, "lane created"); !c.Full || c.Paths != nil {
		t.Fatalf("a new lane gave %+v, want Full", c)
	}
	settle(t, w)
	for i := range RescanLimit + 1 {
		if err := os.WriteFile(tr.Abs(fmt.Sprintf("drafts/n%03d.md", i)), []byte("# n\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	full, paths := false, map[string]bool{}
	for {
		c, ok := nextChange(t, w, 500*time.Millisecond)
		if !ok {
			break
		}
		full = full || c.Full
		for _, p := range c.Paths {
			paths[p] = true
		}
	}
	// A slow machine may split the burst; the part over the limit is Full.
	if !full && len(paths) != RescanLimit+1 {
		t.Fatalf("a burst of %d writes gave %d paths and no Full Change", RescanLimit+1, len(paths))
	}
}

// A Change replaced before it was read keeps its paths, and a lost error
// still means a full scan.
func TestMergeChanges(t *testing.T) {
	got := mergeChanges(Change{Paths: []string{"/b", "/a"}}, Change{Paths: []string{"/c", "/a"}})
	if want := []string{"/a", "/b", "/c"}; got.Full || !reflect.DeepEqual(got.Paths, want) {
		t.Fatalf("merged %+v, want paths %v", got, want)
	}
	if got := mergeChanges(Change{Err: errors.New("overflow")}, Change{Paths: []string{"/a"}}); !got.Full || got.Err != nil {
		t.Fatalf("a replaced error gave %+v, want Full without the error", got)
	}
	var many []string
	for i := range RescanLimit {
		many = append(many, fmt.Sprint(i))
	}
	if got := mergeChanges(Change{Paths: many}, Change{Paths: []string{"x"}}); !got.Full || got.Paths != nil {
		t.Fatalf("merging past the limit gave %d paths, Full %v", len(got.Paths), got.Full)
	}
}

// The watcher's own count decides whether Rescan may trust it: closed, the
// tree is unwatched again.
func TestWatcherCountsItself(t *testing.T) {
	tr := mkTree(t)
	w, err := tr.Watch(testDebounce)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, watched := tr.takeDirty(); !watched {
		t.Fatal("a running watcher does not count")
	}
	w.Close()
	if _, full, watched := tr.takeDirty(); watched || !full {
		t.Fatalf("after Close: watched %v full %v, want unwatched and a full scan due", watched, full)
	}
}

// One save after a quiet spell fires after debounce/5, not the whole
// debounce; right after a firing, the next waits at least debounce/2.
func TestLeadBurst(t *testing.T) {
	const quiet = 100 * time.Millisecond
	b := newLeadBurst(quiet)
	defer b.Cancel()
	start := time.Now()
	b.Event(start)
	<-b.C()
	if d := time.Since(start); d >= quiet {
		t.Errorf("a lone event fired after %v, want about %v", d, quiet/leadFraction)
	}
	now := time.Now()
	b.Fired(now)
	b.Event(now)
	select {
	case <-b.C():
		t.Fatalf("fired %v after the last firing, want at least %v", time.Since(now), quiet/2)
	case <-time.After(quiet/2 - 10*time.Millisecond):
	}
	select {
	case <-b.C():
	case <-time.After(5 * time.Second):
		t.Fatal("the rate-limited burst never fired")
	}
}
