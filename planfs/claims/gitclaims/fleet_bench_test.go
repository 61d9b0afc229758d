package gitclaims

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// countPushes installs a pre-receive hook on the bare remote that counts
// every push it receives; the returned func reads the count.
func countPushes(t testing.TB, bare string) func() int {
	t.Helper()
	count := filepath.Join(t.TempDir(), "pushes")
	hook := filepath.Join(bare, "hooks", "pre-receive")
	script := "#!/bin/sh\ncat >/dev/null\necho x >> '" + count + "'\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return func() int {
		data, _ := os.ReadFile(count)
		return strings.Count(string(data), "x")
	}
}

// fleetOf is 10 clones ("hosts") of one remote, each publishing 10
// workers' records, and a reader clone that has read them all once.
func fleetOf(b *testing.B) (bare string, hosts []*Backend, reader *Backend) {
	bare = remoteWith(b, readyPlans(1))
	ctx := context.Background()
	for h := range 10 {
		pub, _ := cloneOf(b, bare)
		hosts = append(hosts, pub)
		for a := range 10 {
			if _, err := pub.Publish(ctx, record(fmt.Sprintf("host-%d", h), fmt.Sprintf("w%d", a), "run")); err != nil {
				b.Fatal(err)
			}
		}
	}
	reader, _ = cloneOf(b, bare)
	if all, err := reader.Workers(ctx); err != nil || len(all) != 100 {
		b.Fatalf("%d workers read: %v", len(all), err)
	}
	return bare, hosts, reader
}

// BenchmarkFleetRefresh100: 100 workers on 10 hosts; each iteration one
// of them publishes (not timed), then the reader's view of all 100 is
// timed until it shows the change: ls-remote, an incremental fetch of the
// worker refs, one cat-file of the new record, the seen clock.
//
//	go test ./planfs/claims/gitclaims -run '^$' -bench FleetRefresh -benchtime 50x
func BenchmarkFleetRefresh100(b *testing.B) {
	_, hosts, reader := fleetOf(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		h, a := i%10, (i/10)%10
		rec := record(fmt.Sprintf("host-%d", h), fmt.Sprintf("w%d", a), "run")
		rec.Note = fmt.Sprintf("change %d", i)
		if _, err := hosts[h].Publish(ctx, rec); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		all, err := reader.Workers(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if got := all[h*10+a]; got.Note != rec.Note || len(all) != 100 {
			b.Fatalf("the reader sees %q, not %q", got.Note, rec.Note)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/refresh")
}

// BenchmarkFleetPublish: one worker's heartbeat publish among 100, and how
// many pushes the remote received for each (it must be 1).
func BenchmarkFleetPublish(b *testing.B) {
	bare, hosts, _ := fleetOf(b)
	pushes := countPushes(b, bare)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		rec := record("host-3", "w3", "run")
		rec.Heartbeat = float64(time.Now().UnixNano()) / 1e9
		if in, err := hosts[3].Publish(ctx, rec); err != nil || in.Stop != nil {
			b.Fatal(in.Stop, err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(pushes())/float64(b.N), "pushes/publish")
}

// BenchmarkFleetChangeToView100 is what a cockpit sees: from one record's
// publish (its push done) to the reader's view holding it, through
// FleetChanges' word and one Workers read, as the Workers pane does.
func BenchmarkFleetChangeToView100(b *testing.B) {
	_, hosts, reader := fleetOf(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes := reader.FleetChanges(ctx)
	if _, err := reader.Workers(ctx); err != nil {
		b.Fatal(err)
	}
	time.Sleep(2 * FleetPoll) // the watcher's first listing
	var worst, sum time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		h, a := i%10, (i/10)%10
		rec := record(fmt.Sprintf("host-%d", h), fmt.Sprintf("w%d", a), "run")
		rec.Note = fmt.Sprintf("change %d", i)
		b.StartTimer()
		if _, err := hosts[h].Publish(ctx, rec); err != nil {
			b.Fatal(err)
		}
		began := time.Now()
		select {
		case <-changes:
		case <-time.After(10 * time.Second):
			b.Fatal("no word of the change in 10 s")
		}
		all, err := reader.Workers(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if got := all[h*10+a]; got.Note != rec.Note {
			b.Fatalf("the reader sees %q, not %q", got.Note, rec.Note)
		}
		worst, sum = max(worst, time.Since(began)), sum+time.Since(began)
	}
	b.StopTimer()
	b.ReportMetric(float64(sum.Milliseconds())/float64(b.N), "ms/change")
	b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
}
