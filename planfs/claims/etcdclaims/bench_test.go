//go:build etcd

package etcdclaims

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// BenchmarkClaimRace32: 32 workers, each its own client and worker
// session, race for 320 plans per iteration as raceWorker does (a view
// after each win, the next free plan after each loss, starts spread);
// releasing them between iterations is not timed. It reports claims/s and
// doubles (plans two workers both won), which must be 0.
func BenchmarkClaimRace32(b *testing.B) {
	const workers, plans = 32, 320
	dir, id := project(b, plans)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bs := make([]*Backend, workers)
	for i := range bs {
		bs[i] = open(b, dir, id)
		if err := bs[i].StartSession(ctx, time.Minute); err != nil {
			b.Fatal(err)
		}
	}
	var total, doubles int
	var lost atomic.Int64
	var busy time.Duration
	b.ResetTimer()
	for range b.N {
		won := make([][]claims.Held, workers)
		errs := make([]error, workers)
		began := time.Now()
		var wg sync.WaitGroup
		for i := range bs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				won[i], errs[i] = raceWorker(ctx, bs[i], fmt.Sprintf("w%02d", i), i*plans/workers, time.Minute, &lost)
			}()
		}
		wg.Wait()
		busy += time.Since(began)
		b.StopTimer()
		seen := map[string]bool{}
		for i, hs := range won {
			if errs[i] != nil {
				b.Fatal(errs[i])
			}
			for _, h := range hs {
				if seen[h.Slug] {
					doubles++
				}
				seen[h.Slug] = true
				total++
				if err := bs[i].Release(ctx, h, "bench"); err != nil {
					b.Fatal(err)
				}
			}
		}
		if len(seen) != plans {
			b.Fatalf("%d of %d plans claimed", len(seen), plans)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(total)/busy.Seconds(), "claims/s")
	b.ReportMetric(float64(doubles), "doubles")
	b.ReportMetric(float64(lost.Load())/float64(total), "lost/claim")
}
