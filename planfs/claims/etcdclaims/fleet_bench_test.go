//go:build etcd

package etcdclaims

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkFleetRefresh100: 100 workers on 10 hosts (10 clients, each with
// its worker session) publish to etcd; each iteration one of them
// publishes and the reader, told by its watch, reads all 100 again until
// the change shows. Timed from the publish to the view showing it.
//
//	go test -tags etcd ./planfs/claims/etcdclaims -run '^$' -bench FleetRefresh -benchtime 200x
func BenchmarkFleetRefresh100(b *testing.B) {
	dir, id := project(b, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var hosts []*Backend
	for h := range 10 {
		pub := open(b, dir, id)
		if err := pub.StartSession(ctx, time.Minute); err != nil {
			b.Fatal(err)
		}
		hosts = append(hosts, pub)
		for a := range 10 {
			if _, err := pub.Publish(ctx, record(fmt.Sprintf("host-%d", h), fmt.Sprintf("w%d", a), "run")); err != nil {
				b.Fatal(err)
			}
		}
	}
	reader := open(b, dir, id)
	changes := reader.FleetChanges(ctx)
	if all, err := reader.Workers(ctx); err != nil || len(all) != 100 {
		b.Fatalf("%d workers read: %v", len(all), err)
	}
	time.Sleep(100 * time.Millisecond) // the watch is in place
	for len(changes) > 0 {
		<-changes
	}
	b.ResetTimer()
	for i := range b.N {
		h, a := i%10, (i/10)%10
		rec := record(fmt.Sprintf("host-%d", h), fmt.Sprintf("w%d", a), "run")
		rec.Note = fmt.Sprintf("change %d", i)
		if _, err := hosts[h].Publish(ctx, rec); err != nil {
			b.Fatal(err)
		}
		for seen := false; !seen; {
			select {
			case <-changes:
			case <-time.After(5 * time.Second):
				b.Fatal("no watch event in 5 s")
			}
			all, err := reader.Workers(ctx)
			if err != nil {
				b.Fatal(err)
			}
			seen = all[h*10+a].Note == rec.Note
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/refresh")
}

// BenchmarkFleetPublish: one worker's heartbeat publish among 100: one
// transaction (the put and the stop key's check together).
func BenchmarkFleetPublish(b *testing.B) {
	dir, id := project(b, 1)
	ctx := context.Background()
	pub := open(b, dir, id)
	if err := pub.StartSession(ctx, time.Minute); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if in, err := pub.Publish(ctx, record("host-0", "w0", "run")); err != nil || in.Stop != nil {
			b.Fatal(in.Stop, err)
		}
	}
}
