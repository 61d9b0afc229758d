package ui

import (
	"fmt"
	"slices"
	"testing"

	"github.com/fsnotify/fsnotify"

	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// When fsnotify's queue overflows, the watcher reports it as a Change with
// Err (and that Change replaces a plain one still waiting in the channel).
// The UI only records the problem and does not rescan, so whatever the
// overflow swallowed stays off screen, and a plain change that was merged
// into the error is lost too: the rows are stale until some later change.
func TestWatchErrorStillRefreshes(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 120, 32)
	if _, err := p.tree.Claim("bugs/crash-on-save.md", "small-9", 3600); err != nil {
		t.Fatal(err)
	}
	h.send(changeMsg{Err: fmt.Errorf("watching %s: %w", p.tree.Plans, fsnotify.ErrEventOverflow)})
	if slices.Contains(h.rows(), "bugs/crash-on-save.md") {
		t.Errorf("after a watch error the UI still lists bugs/crash-on-save.md, claimed and moved before it:\n%s", h.view())
	}
}

// A source passed in through the options is the one the program waits
// on, and its owner's to close: one source may serve many sessions.
func TestSourceFromOptionsIsTheOwnersToClose(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	w, err := p.tree.Watch(Debounce)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	m := New(uictx.Options{Tree: p.tree, Source: w})
	if watcherOf(&m) != uictx.Source(w) {
		t.Fatalf("the program watches %v, not the source it was given", watcherOf(&m))
	}
	m.Close()
	select {
	case _, ok := <-w.Changes():
		if !ok {
			t.Fatal("closing the program closed the source it was given")
		}
	default:
	}
}
