package planfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/model"
)

// testDebounce is what the UI passes.
const testDebounce = 50 * time.Millisecond

func startWatch(t *testing.T, tr *Tree) *Watcher {
	t.Helper()
	w, err := tr.Watch(testDebounce)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// nextChange waits up to within for a Change.
func nextChange(t *testing.T, w *Watcher, within time.Duration) (Change, bool) {
	t.Helper()
	select {
	case c, ok := <-w.Changes():
		if !ok {
			t.Fatal("Changes closed while watching")
		}
		return c, true
	case <-time.After(within):
		return Change{}, false
	}
}

// settle drains Changes until none comes for 4 debounces, so the next one
// seen belongs to what the test does next.
func settle(t *testing.T, w *Watcher) {
	t.Helper()
	for {
		if _, ok := nextChange(t, w, 4*testDebounce); !ok {
			return
		}
	}
}

// mustChange fails unless a plain Change arrives within a second of do.
func mustChange(t *testing.T, w *Watcher, what string, do func() error) {
	t.Helper()
	settle(t, w)
	if err := do(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	c, ok := nextChange(t, w, 5*time.Second)
	if !ok {
		t.Fatalf("%s: no Change within a second", what)
	}
	if c.Err != nil {
		t.Fatalf("%s: Change with error %v", what, c.Err)
	}
}

func TestWatchSeesWhatScanReads(t *testing.T) {
	t.Parallel()
	tr := mkTree(t, "features/a.md: - **Value:** high")
	// A lane created after the watch starts must be watched too.
	if err := os.RemoveAll(tr.Abs("blocked")); err != nil {
		t.Fatal(err)
	}
	w := startWatch(t, tr)

	mustChange(t, w, "write in a lane", func() error {
		return os.WriteFile(tr.Abs("features/a.md"), []byte("# a\n- **Value:** low\n"), 0o644)
	})
	mustChange(t, w, "new plan", func() error {
		return os.WriteFile(tr.Abs("bugs/b.md"), []byte("# b\n"), 0o644)
	})
	mustChange(t, w, "rename between lanes", func() error {
		return os.Rename(tr.Abs("features/a.md"), tr.Abs("in-progress/a.md"))
	})
	mustChange(t, w, "lease created", func() error {
		return tr.writeLease("in-progress/a.md", tr.newLease("a.md", "mid-1", "features/a.md", newToken(), 60))
	})
	mustChange(t, w, "lease removed", func() error {
		return os.Remove(tr.leasePath("in-progress/a.md"))
	})
	mustChange(t, w, "event appended", func() error {
		tr.appendEvent(Event{Event: "claim", Slug: "a", From: "features/a.md", To: "in-progress/a.md", AgentID: "mid-1"})
		return nil
	})
	mustChange(t, w, "lane created", func() error { return os.Mkdir(tr.Abs("blocked"), 0o755) })
	mustChange(t, w, "plan written into the new lane", func() error {
		return os.WriteFile(tr.Abs("blocked/c.md"), []byte("# c\n"), 0o644)
	})
	mustChange(t, w, "plan removed", func() error { return os.Remove(tr.Abs("blocked/c.md")) })
}

// An idle tree with workers taking the lease lock, writing temp files and
// touching modes must not wake the UI.
func TestWatchIgnoresWhatCannotMatter(t *testing.T) {
	t.Parallel()
	tr := mkTree(t, "features/a.md:")
	w := startWatch(t, tr)
	settle(t, w)
	deadline := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(deadline) {
		unlock, err := tr.lockLeases(time.Second)
		if err != nil {
			t.Fatal(err)
		}
		unlock()
		// flock(2) by hand too, as anchor and other tools do.
		f, err := os.OpenFile(filepath.Join(tr.Plans, ".leases", lockFile), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		unix.Flock(int(f.Fd()), unix.LOCK_SH)
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
		os.Chmod(tr.Abs("features/a.md"), 0o600)
		os.Chmod(tr.Abs("features/a.md"), 0o644)
		os.WriteFile(filepath.Join(tr.Plans, ".leases", ".tmp-x"), []byte("x"), 0o644)
		os.Remove(filepath.Join(tr.Plans, ".leases", ".tmp-x"))
		os.WriteFile(tr.Abs("features/.gitkeep"), nil, 0o644)
		os.WriteFile(filepath.Join(tr.Plans, "logs", "mid-1.log"), []byte("output\n"), 0o644)
		os.WriteFile(filepath.Join(tr.Plans, "README.md"), []byte("# Plans\n"), 0o644)
		time.Sleep(5 * time.Millisecond)
	}
	if c, ok := nextChange(t, w, 300*time.Millisecond); ok {
		t.Fatalf("Change from events that cannot matter: %+v", c)
	}
}

func TestWatchDebouncesBursts(t *testing.T) {
	t.Parallel()
	tr := mkTree(t)
	w := startWatch(t, tr)
	settle(t, w)
	start := time.Now()
	for i := range 200 {
		p := tr.Abs("features/p" + string(rune('a'+i%26)) + ".md")
		if err := os.WriteFile(p, []byte(strings.Repeat("x", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	burst := time.Since(start)
	n := 0
	for {
		c, ok := nextChange(t, w, 500*time.Millisecond)
		if !ok {
			break
		}
		if c.Err != nil {
			t.Fatalf("Change with error %v", c.Err)
		}
		n++
	}
	t.Logf("200 writes in %v gave %d Changes", burst.Round(time.Millisecond), n)
	// At most one Change per capped debounce window (4 × 50 ms) while the
	// burst lasts, plus the one after it: a slow machine stretches the
	// burst, never the count per window.
	limit := 2 + int(burst/(4*testDebounce))
	if n < 1 || n > max(5, limit) {
		t.Fatalf("200 writes in %v gave %d Changes, want 1 to %d", burst, n, max(5, limit))
	}
}

// A constant stream still refreshes: the cap, not the quiet wait, decides.
func TestWatchStreamStillEmits(t *testing.T) {
	t.Parallel()
	tr := mkTree(t)
	w := startWatch(t, tr)
	settle(t, w)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			os.WriteFile(tr.Abs("features/s.md"), []byte(strings.Repeat("y", i%100)), 0o644)
			time.Sleep(testDebounce / 5)
		}
	}()
	defer func() { close(stop); <-done }()
	n := 0
	// Without the cap, a stream that never pauses would give no Change at
	// all until it stopped; a loaded CI machine may be slow, so ask only for
	// more than one within a few seconds (every ~4 debounces, 200 ms, is
	// what the cap gives), and stop waiting once there are two.
	for deadline := time.Now().Add(3 * time.Second); n < 2 && time.Now().Before(deadline); {
		if _, ok := nextChange(t, w, time.Until(deadline)); ok {
			n++
		}
	}
	if n < 2 {
		t.Fatalf("three seconds of constant writes gave %d Changes, want about 15", n)
	}
}

func waitErr(t *testing.T, w *Watcher, within time.Duration) Change {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if c, ok := nextChange(t, w, time.Until(deadline)); ok && c.Err != nil {
			return c
		}
	}
	t.Fatalf("no Change with an error within %v", within)
	return Change{}
}

func TestWatchTreeGoneAndBack(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"removed", "renamed"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			tr := mkTree(t, "features/a.md:")
			w := startWatch(t, tr)
			settle(t, w)
			aside := tr.Plans + ".old"
			var err error
			if how == "removed" {
				err = os.RemoveAll(tr.Plans)
			} else {
				err = os.Rename(tr.Plans, aside)
			}
			if err != nil {
				t.Fatal(err)
			}
			c := waitErr(t, w, 5*time.Second)
			if !errors.Is(c.Err, fs.ErrNotExist) || !strings.Contains(c.Err.Error(), tr.Plans) {
				t.Fatalf("gone: %v", c.Err)
			}
			// Once said, and the renamed tree's changes are not ours.
			if how == "renamed" {
				os.WriteFile(filepath.Join(aside, "features", "b.md"), []byte("# b\n"), 0o644)
			}
			if c, ok := nextChange(t, w, 1500*time.Millisecond); ok {
				t.Fatalf("while gone: %+v", c)
			}
			if how == "removed" {
				_, err = Scaffold(tr.Project)
			} else {
				err = os.Rename(aside, tr.Plans)
			}
			if err != nil {
				t.Fatal(err)
			}
			c, ok := nextChange(t, w, 2*goneEvery)
			if !ok || c.Err != nil {
				t.Fatalf("back: %+v %v", c, ok)
			}
			// The watches are back too, lanes included.
			mustChange(t, w, "write after coming back", func() error {
				return os.WriteFile(tr.Abs("features/c.md"), []byte("# c\n"), 0o644)
			})
		})
	}
}

func TestWatchStartsWithTreeGone(t *testing.T) {
	t.Parallel()
	tr := mkTree(t)
	os.RemoveAll(tr.Plans)
	w := startWatch(t, tr)
	if c := waitErr(t, w, 5*time.Second); !errors.Is(c.Err, fs.ErrNotExist) {
		t.Fatalf("gone at start: %v", c.Err)
	}
	if _, err := Scaffold(tr.Project); err != nil {
		t.Fatal(err)
	}
	if c, ok := nextChange(t, w, 2*goneEvery); !ok || c.Err != nil {
		t.Fatalf("back: %+v %v", c, ok)
	}
}

// A reader that is away finds one Change, not a backlog, and the newest
// state wins: the tree coming back replaces the error that it was gone.
func TestWatchSendNeverBlocks(t *testing.T) {
	out := make(chan Change, 1)
	l := &watchLoop{out: out}
	l.send(Change{})
	l.send(Change{})
	l.send(Change{Err: fs.ErrNotExist})
	if c := <-out; c.Err == nil {
		t.Fatal("an error did not replace a pending plain Change")
	}
	l.send(Change{Err: fs.ErrNotExist})
	l.send(Change{})
	if c := <-out; c.Err != nil {
		t.Fatalf("a plain Change did not replace a pending error: %v", c.Err)
	}
	select {
	case c := <-out:
		t.Fatalf("more than one pending: %+v", c)
	default:
	}
}

func TestWatchMatters(t *testing.T) {
	root := "/p/.plans"
	l := &watchLoop{root: root}
	for name, want := range map[string]bool{
		"features/a.md":               true,
		"in-progress/a.local.md":      true,
		"features/README.md":          false,
		"features/.gitkeep":           false,
		"features/a.md.swp":           false,
		"archive/a.md":                false,
		"features":                    true,
		"completed":                   true,
		".leases":                     true,
		"logs":                        true,
		"README.md":                   false,
		".gitignore":                  false,
		".leases/" + lockFile:         false,
		".leases/.tmp-123":            false,
		".leases/.stale-abc":          false,
		".leases/features__a.md.json": true,
		"logs/events.jsonl":           true,
		"logs/mid-1.log":              false,
		"features/sub/a.md":           false,
	} {
		ev := fsnotify.Event{Name: filepath.Join(root, name), Op: fsnotify.Write}
		if got := l.matters(ev); got != want {
			t.Errorf("Write %s matters = %v, want %v", name, got, want)
		}
	}
	if l.matters(fsnotify.Event{Name: filepath.Join(root, "features/a.md"), Op: fsnotify.Chmod}) {
		t.Error("a Chmod-only event matters")
	}
	if !l.matters(fsnotify.Event{Name: filepath.Join(root, "features/a.md"), Op: fsnotify.Chmod | fsnotify.Write}) {
		t.Error("a Write with a Chmod does not matter")
	}
	if got := watchedDirs(); len(got) != len(model.Lanes)+2 {
		t.Errorf("watchedDirs %v", got)
	}
}

func TestWatchCloseIsIdempotentAndLeavesNothing(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	before := runtime.NumGoroutine()
	w, err := tr.Watch(testDebounce)
	if err != nil {
		t.Fatal(err)
	}
	// A pending Change at Close must not keep anything alive.
	os.WriteFile(tr.Abs("features/a.md"), []byte("# a\n\nmore\n"), 0o644)
	time.Sleep(2 * testDebounce)
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- w.Close() }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("third Close: %v", err)
	}
	closed := false
	for i := 0; i < 2 && !closed; i++ { // at most the one pending Change, then closed
		select {
		case _, ok := <-w.Changes():
			closed = !ok
		case <-time.After(time.Second):
			t.Fatal("Changes not closed after Close")
		}
	}
	if !closed {
		t.Fatal("Changes not closed after Close")
	}
	select {
	case <-w.done:
	default:
		t.Fatal("goroutine still running after Close returned")
	}
	deadline := time.Now().Add(time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines: %d before Watch, %d after Close", before, runtime.NumGoroutine())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
