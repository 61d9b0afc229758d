package remotetest

import (
	"testing"
	"time"

	"fleetwatch/internal/testkit/fwtest"
)

// BenchmarkListRemoteVsLocal times `work-once --list` (the real binary)
// against a git remote holding 1,000 live leases, and the local listing of
// the same 1,000 plans, each claimed from lease files; it reports both in
// ms and their ratio (the target is at most 2×).
func BenchmarkListRemoteVsLocal(b *testing.B) {
	const n = 1000
	ps := plans(n)
	f := newFleet(b, ps...)
	remote := f.clone(b, f.bare)
	needBackend(b, remote)
	if r := fwtest.Run(b, remote, "work-once", "--root", remote, "--agent-id", "holder", "--max-plans", "1000"); r.Code != 0 {
		b.Fatalf("claiming %d plans through git: exit %d: %s", n, r.Code, r.Stderr)
	}
	if got := len(f.leases(b)); got != n {
		b.Fatalf("the remote holds %d leases, want %d", got, n)
	}
	local := fwtest.NewTree(b, ps...)
	if r := fwtest.Run(b, local, "work-once", "--root", local, "--agent-id", "holder", "--max-plans", "1000"); r.Code != 0 {
		b.Fatalf("claiming %d plans locally: exit %d: %s", n, r.Code, r.Stderr)
	}
	reader := f.clone(b, f.bare)
	listOnce(b, reader) // the first read fetches every lease commit; later ones are cached by oid
	listOnce(b, local)
	var remoteT, localT time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		listOnce(b, reader)
		remoteT += time.Since(start)
		start = time.Now()
		listOnce(b, local)
		localT += time.Since(start)
	}
	b.StopTimer()
	rm := float64(remoteT.Microseconds()) / 1000 / float64(b.N)
	lm := float64(localT.Microseconds()) / 1000 / float64(b.N)
	b.ReportMetric(rm, "remote-ms")
	b.ReportMetric(lm, "local-ms")
	b.ReportMetric(rm/lm, "ratio")
}

func listOnce(b *testing.B, dir string) {
	if r := fwtest.Run(b, dir, "work-once", "--root", dir, "--agent-id", "reader", "--list"); r.Code != 0 {
		b.Fatalf("--list in %s: exit %d: %s", dir, r.Code, r.Stderr)
	}
}
