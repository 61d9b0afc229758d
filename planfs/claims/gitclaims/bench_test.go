package gitclaims

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// cpuNow is the CPU time this process and every child it waited for have
// used: a claim's cost counts each git it starts.
func cpuNow() time.Duration {
	var self, kids syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}

// ownCPU is this process's CPU alone: fleetwatch's share of a claim.
func ownCPU() time.Duration {
	var self syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	return time.Duration(self.Utime.Nano() + self.Stime.Nano())
}

// BenchmarkClaimRace is 8 clones racing for 200 plans through a bare
// remote by path (file://), each picking as work-once does (Glance):
// claims/s, double claims, the CPU of every process per claim and this
// process's share of it. The clones are made before the clock starts.
//
//	go test ./planfs/claims/gitclaims -run '^$' -bench ClaimRace -benchtime 5x
func BenchmarkClaimRace(b *testing.B) {
	var took, spent, mine time.Duration
	var claimed, doubles int
	losses.Store(0)
	for range b.N {
		b.StopTimer()
		bare := remoteWith(b, readyPlans(200))
		workers := clonesOf(b, bare, 8)
		b.StartTimer()
		cpu, own, start := cpuNow(), ownCPU(), time.Now()
		got := race(b, workers)
		took, spent, mine = took+time.Since(start), spent+cpuNow()-cpu, mine+ownCPU()-own
		for _, who := range got {
			doubles += len(who) - 1
		}
		if len(got) != 200 {
			b.Fatalf("%d plans claimed", len(got))
		}
		claimed += len(got)
	}
	// Averages over every round: one round's figures vary by a tenth.
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(claimed) }
	b.ReportMetric(float64(claimed)/took.Seconds(), "claims/s")
	b.ReportMetric(float64(doubles), "doubles")
	b.ReportMetric(float64(losses.Load())/float64(claimed), "lost/claim")
	b.ReportMetric(per(spent), "cpu-ms/claim")
	b.ReportMetric(per(mine), "own-cpu-ms/claim")
}

// BenchmarkViewLeases1000 is one View of a remote holding 1,000 plans,
// each under a live lease.
//
//	go test ./planfs/claims/gitclaims -run '^$' -bench ViewLeases -benchtime 20x
func BenchmarkViewLeases1000(b *testing.B) {
	bare := remoteWith(b, readyPlans(1000))
	holder, _ := cloneOf(b, bare)
	v := view(b, holder)
	for i := range 1000 {
		if _, err := holder.Claim(ctx, v, fmt.Sprintf("features/p%03d.md", i), claims.Holder{AgentID: "h"}, time.Hour); err != nil {
			b.Fatal(err)
		}
	}
	obs, _ := cloneOf(b, bare)
	if n := len(view(b, obs).Leases); n != 1000 {
		b.Fatalf("%d leases", n)
	}
	b.ResetTimer()
	for range b.N {
		fresh, _ := cloneOf(b, bare)
		b.StartTimer()
		if n := len(view(b, fresh).Leases); n != 1000 {
			b.Fatalf("%d leases", n)
		}
		b.StopTimer()
	}
}
