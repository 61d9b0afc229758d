package feed

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/planfs"
)

// queueEvery is the overview's clock for the queues (ui/projects.go).
const queueEvery = 10 * time.Second

// newHub is a hub over an empty tree whose readings are counted, not
// made: what is under test is when the hub reads.
func newHub(t *testing.T) (*Hub, *atomic.Int32) { return newHubWith(t, nil) }

// newHubWith is newHub with the readers as more changes them.
func newHubWith(t *testing.T, more func(*Readers)) (*Hub, *atomic.Int32) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, planfs.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	tree, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var merges atomic.Int32
	none := func() tea.Msg { return nil }
	r := Readers{
		Board: none, Trees: none, Inbox: none, Fleet: none,
		Workers:    func(bool) tea.Msg { return nil },
		Merge:      func() tea.Msg { return merges.Add(1) },
		Problem:    func(string) tea.Msg { return nil },
		Checking:   func(tea.Msg) bool { return false },
		RadarEvery: time.Second, MergeEvery: time.Hour,
	}
	if more != nil {
		more(&r)
	}
	h := NewHub(tree, nil, r, 10*time.Millisecond)
	t.Cleanup(func() { _ = h.Close() })
	return h, &merges
}

// The overview's clock asks a hub for its queue only when the last
// reading is old: many served sessions' overviews read it once.
func TestPokeQueueOnceForMany(t *testing.T) {
	t.Parallel()
	h, _ := newHub(t)
	mergeAt := &h.readAt[Merge]
	pokeQueue := func() { h.PokeOlder(Merge, queueEvery/2) }
	waitRead := func(after int64) int64 {
		t.Helper()
		for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(5 * time.Millisecond) {
			if at := mergeAt.Load(); at > after {
				return at
			}
		}
		t.Fatal("the hub did not read the queue")
		return 0
	}
	first := waitRead(0)
	for range 20 {
		pokeQueue()
	}
	time.Sleep(300 * time.Millisecond)
	if at := mergeAt.Load(); at != first {
		t.Fatal("a queue read just now was read again")
	}
	mergeAt.Store(time.Now().Add(-queueEvery).UnixNano())
	old := mergeAt.Load()
	pokeQueue()
	waitRead(old)
}

// The forge is read on a goroutine of its own, at start and on its clock,
// never holding the other readings; closing the hub ends a reading that
// never answers.
func TestForgeReadOffTheHubsGoroutine(t *testing.T) {
	t.Parallel()
	var reads atomic.Int32
	ended := make(chan struct{})
	h, merges := newHubWith(t, func(r *Readers) {
		r.Forge = func(ctx context.Context) {
			if reads.Add(1) == 2 {
				<-ctx.Done() // a forge that never answers
				close(ended)
			}
		}
		r.ForgeEvery = 20 * time.Millisecond
	})
	for start := time.Now(); reads.Load() < 2; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the forge was read %d times", reads.Load())
		}
	}
	// The hub still reads while the forge hangs.
	before := merges.Load()
	h.Poke(Merge.Set())
	for start := time.Now(); merges.Load() == before; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("a hanging forge held the queue's reading back")
		}
	}
	_ = h.Close()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("closing the hub did not end the forge's reading")
	}
}
