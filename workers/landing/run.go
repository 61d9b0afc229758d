package landing

import (
	"context"
	"errors"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// runPoll is how often RunQueue looks at an empty or filling queue.
var runPoll = time.Second

// RunQueue is `queue run`: a foreground loop an operator starts, landing
// the queue's head (a batch, with `queue: {batch: N}`) while it is ready.
// An empty queue is waited on; a short batch waits up to `queue: {wait:}`
// from its oldest entry to fill. It returns on the first thing that needs a
// person (the head not ready, an error, another lander) and nil when ctx
// ends (SIGINT, SIGTERM): a landing in flight then stops its checks and
// never swaps, so nothing is half landed. each hears of every landing.
func RunQueue(ctx context.Context, t *planfs.Tree, opt LandOptions, each func(Landing)) error {
	for ctx.Err() == nil {
		if !batchDue(t) {
			sleepCtx(ctx, runPoll)
			continue
		}
		l, err := Land(ctx, t, opt)
		if l.Slug != "" {
			each(l)
		}
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, ErrEmpty):
			sleepCtx(ctx, runPoll)
		case err != nil:
			return err
		}
	}
	return nil
}

// batchDue says whether the queue should be landed now: it holds a full
// batch or a hotfix, or its oldest entry has waited `wait:`. An empty
// queue is due (Land says so, and finishes a cut-short landing).
func batchDue(t *planfs.Tree) bool {
	s, err := config.Load(t.Project)
	if err != nil || s.QueueBatch <= 1 || s.QueueWait <= 0 {
		return true
	}
	entries, err := readQueue(t.Project)
	if err != nil || len(entries) == 0 || len(entries) >= s.QueueBatch {
		return true
	}
	oldest := entries[0].AddedAt
	for _, e := range entries {
		if e.Hotfix {
			return true
		}
		if e.AddedAt.Before(oldest) {
			oldest = e.AddedAt
		}
	}
	return t.Now().Sub(oldest) >= s.QueueWait
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
