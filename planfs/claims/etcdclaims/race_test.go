//go:build etcd

package etcdclaims

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// raceWorker claims ready plans through b until none is left, as a worker
// with no --max-plans limit does: after a win it takes the next free plan
// of the same view, after a lost race it reads again (Claim's contract).
// It starts at the free plan start places in (0: the pick every other
// worker makes too), and counts its lost races in lost.
func raceWorker(ctx context.Context, b *Backend, agent string, start int, ttl time.Duration, lost *atomic.Int64) ([]claims.Held, error) {
	var won []claims.Held
	for range 1000 {
		v, err := b.Glance(ctx) // as work-once picks
		if err != nil {
			return won, err
		}
		var free []string
		for _, p := range v.Snapshot.Plans {
			if p.Lane.Ready() {
				free = append(free, p.Rel)
			}
		}
		if len(free) == 0 {
			return won, nil
		}
		for k := range free {
			h, err := b.Claim(ctx, v, free[(start+k)%len(free)], claims.Holder{AgentID: agent}, ttl)
			if errors.Is(err, claims.ErrLost) {
				lost.Add(1)
				break
			}
			if err != nil {
				return won, err
			}
			won = append(won, h)
		}
	}
	return won, fmt.Errorf("%s: still claiming after 1000 views", agent)
}

// TestClaimRace: 32 workers, each its own client, half on a worker session
// and half claim-only, race for 100 plans in 3 rounds: every plan is
// claimed exactly once a round, and every lease is released after it.
// Losses are counted: a race that never collides tests nothing.
func TestClaimRace(t *testing.T) {
	t.Parallel()
	const workers, plans, rounds = 32, 100, 3
	dir, id := project(t, plans)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bs := make([]*Backend, workers)
	for i := range bs {
		bs[i] = open(t, dir, id)
		if i%2 == 0 {
			if err := bs[i].StartSession(ctx, 30*time.Second); err != nil {
				t.Fatal(err)
			}
		}
	}
	for round := range rounds {
		var lost atomic.Int64
		won := make([][]claims.Held, workers)
		errs := make([]error, workers)
		var wg sync.WaitGroup
		for i := range bs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Round 0 races every worker for the same pick each time;
				// later rounds start workers apart, so they collide as
				// their picks meet.
				start := 0
				if round > 0 {
					start = i * plans / workers
				}
				won[i], errs[i] = raceWorker(ctx, bs[i], fmt.Sprintf("w%02d", i), start, time.Minute, &lost)
			}()
		}
		wg.Wait()
		by := map[string]string{}
		for i, hs := range won {
			if errs[i] != nil {
				t.Fatalf("round %d: worker %d: %v", round, i, errs[i])
			}
			for _, h := range hs {
				if other, dup := by[h.Slug]; dup {
					t.Errorf("round %d: %s claimed twice, by %s and w%02d", round, h.Slug, other, i)
				}
				by[h.Slug] = fmt.Sprintf("w%02d", i)
			}
		}
		t.Logf("round %d: %d plans won, %d races lost", round, len(by), lost.Load())
		if lost.Load() == 0 {
			t.Errorf("round %d: 32 workers never collided", round)
		}
		if len(by) != plans {
			t.Fatalf("round %d: %d plans claimed, want %d", round, len(by), plans)
		}
		for i, hs := range won {
			for _, h := range hs {
				if err := bs[i].Release(ctx, h, "round over"); err != nil {
					t.Fatalf("round %d: release %s: %v", round, h.Slug, err)
				}
			}
		}
		v, err := bs[0].View(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Leases) != 0 {
			t.Fatalf("round %d: %d leases left after every release", round, len(v.Leases))
		}
	}
}
