package notify

import (
	"context"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// WatchOptions are Watch's.
type WatchOptions struct {
	// Backend is the remote claims backend leases are read from; nil for
	// the lease files.
	Backend claims.Backend
	// Every is the longest time between two looks (a worker goes stale,
	// a plan gets stuck, the queue's gate moves with no file changing).
	Every      time.Duration
	StuckAfter time.Duration
	// Debounce gathers a burst of changes into one look.
	Debounce time.Duration
	// Looked, when set, is told of each look: its notices and the error
	// of what could not be read.
	Looked func(ns []model.Notice, err error)
}

// Watch looks at the project on every change the tree's and the workers'
// watchers see, and every opt.Every, and offers n every notice true then;
// until ctx ends. A watcher that cannot start leaves the clock to look.
func Watch(ctx context.Context, t *planfs.Tree, n *Notifier, opt WatchOptions) {
	var changes <-chan planfs.Change
	if w, err := t.Watch(opt.Debounce); err == nil {
		defer w.Close()
		changes = w.Changes()
	}
	var states <-chan look.StateChange
	if sw, err := look.WatchStates(t.Project, opt.Debounce); err == nil {
		defer sw.Close()
		states = sw.Changes()
	}
	tick := time.NewTicker(opt.Every)
	defer tick.Stop()
	for {
		r, err := Gather(t, opt.Backend, opt.StuckAfter)
		ns := model.Conditions(Facts(r))
		n.Offer(ns)
		if opt.Looked != nil {
			opt.Looked(ns, err)
		}
		select {
		case <-ctx.Done():
			return
		case _, ok := <-changes:
			if !ok {
				changes = nil
			}
		case _, ok := <-states:
			if !ok {
				states = nil
			}
		case <-tick.C:
		}
	}
}

// Current is Options.Current for the project of t: every notice true now,
// read as Watch reads it. The notifier calls it one at a time; t is its
// own, not a face's.
func Current(t *planfs.Tree, backend claims.Backend, stuckAfter time.Duration) func() ([]model.Notice, error) {
	return func() ([]model.Notice, error) {
		r, err := Gather(t, backend, stuckAfter)
		if err != nil {
			return nil, err
		}
		return model.Conditions(Facts(r)), nil
	}
}
