package ui

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A change on disk with N sessions open: one real tree and its real
// watcher, one hub, N real programs drawing to nowhere. Each op moves a
// plan between bugs/ and features/ and waits until every session shows
// it. Reported: the time until all N have it (ms-to-all/op, and the worst
// max-ms-to-all); the process's CPU while idle (idle-cpu-ms/s: the
// countdown tick and the frame timer of every session), and per change
// beyond idle (cpu-ms/op; gross-cpu-ms/op with idle in), which with 20
// sessions should stay within twice that of one.
func BenchmarkHubChange1(b *testing.B)  { benchHubChange(b, 1) }
func BenchmarkHubChange20(b *testing.B) { benchHubChange(b, 20) }

func benchHubChange(b *testing.B, n int) {
	p := newProject(b)
	hub := newHub(b, p)
	ss := make([]*session, n)
	for i := range ss {
		ss[i] = openSession(b, p, hub)
	}
	waitAll(b, ss, "bugs/crash-on-save.md", 30*time.Second)
	time.Sleep(5 * Debounce) // the first readings are all out
	rels := [2]string{"bugs/crash-on-save.md", "features/crash-on-save.md"}
	var total, worst time.Duration
	idle0, idleAt := cpuTime(), time.Now()
	time.Sleep(time.Second) // a countdown tick in every session
	idleRate := float64(cpuTime()-idle0) / float64(time.Since(idleAt))
	cpu0, start := cpuTime(), time.Now()
	b.ResetTimer()
	for i := range b.N {
		from, to := rels[i%2], rels[(i+1)%2]
		if err := os.Rename(filepath.Join(p.tree.Plans, from), filepath.Join(p.tree.Plans, to)); err != nil {
			b.Fatal(err)
		}
		took := waitAll(b, ss, to, 10*time.Second)
		total, worst = total+took, max(worst, took)
		// What else the change leads to (the inbox, a second look), so
		// the CPU counted is all of this change's.
		time.Sleep(2 * Debounce)
	}
	b.StopTimer()
	cpu, took := cpuTime()-cpu0, time.Since(start)
	net := float64(cpu) - idleRate*float64(took)
	b.ReportMetric(float64(total.Microseconds())/1e3/float64(b.N), "ms-to-all/op")
	b.ReportMetric(float64(worst.Microseconds())/1e3, "max-ms-to-all")
	b.ReportMetric(idleRate*1e3, "idle-cpu-ms/s")
	b.ReportMetric(float64(cpu)/1e6/float64(b.N), "gross-cpu-ms/op")
	b.ReportMetric(max(0, net)/1e6/float64(b.N), "cpu-ms/op")
}

// cpuTime is the CPU this process has used, user and system, children
// (git) included once they have been waited for.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}
