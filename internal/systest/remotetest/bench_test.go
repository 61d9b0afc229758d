package remotetest

import (
	"bytes"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// BenchmarkListRemoteVsLocal times `work-once --list` (the real binary)
// against a git remote holding 1,000 live leases, and the local listing of
// the same 1,000 plans, each claimed from lease files; it reports both in
// ms and their ratio (the target is at most 2×).
func BenchmarkListRemoteVsLocal(b *testing.B) {
	const n = 1000
	ps := Plans(n)
	f := NewFleet(b, ps...)
	remote := f.Clone(b, f.Bare)
	NeedBackend(b, remote)
	if r := fwtest.Run(b, remote, "work-once", "--root", remote, "--agent-id", "holder", "--slug", "p000"); r.Code != 0 {
		b.Fatalf("claiming p000 through git: exit %d: %s", r.Code, r.Stderr)
	}
	f.copyLease(b, "p000", n)
	if got := len(f.Leases(b)); got != n {
		b.Fatalf("the remote holds %d leases, want %d", got, n)
	}
	local := fwtest.NewTree(b, ps...)
	if r := fwtest.Run(b, local, "work-once", "--root", local, "--agent-id", "holder", "--max-plans", "1000"); r.Code != 0 {
		b.Fatalf("claiming %d plans locally: exit %d: %s", n, r.Code, r.Stderr)
	}
	reader := f.Clone(b, f.Bare)
	listOnce(b, reader) // the first read fetches every lease commit; later ones are cached by oid
	listOnce(b, local)
	// A sub-benchmark, so the setup above runs once whatever b.N becomes.
	b.Run("list", func(b *testing.B) {
		var remoteT, localT time.Duration
		for range b.N {
			start := time.Now()
			listOnce(b, reader)
			remoteT += time.Since(start)
			start = time.Now()
			listOnce(b, local)
			localT += time.Since(start)
		}
		rm := float64(remoteT.Microseconds()) / 1000 / float64(b.N)
		lm := float64(localT.Microseconds()) / 1000 / float64(b.N)
		b.ReportMetric(rm, "remote-ms")
		b.ReportMetric(lm, "local-ms")
		b.ReportMetric(rm/lm, "ratio")
	})
}

// copyLease gives plans p001 … p(n-1) a live lease on the remote like
// template's (its lease commit's files, with the slug and lane replaced;
// template must be a bug), written
// by one git fast-import: claiming 1,000 plans one push at a time would
// take minutes.
func (f *Fleet) copyLease(b *testing.B, template string, n int) {
	ref := LeaseRefs + template
	var files [][2]string
	for _, name := range strings.Split(gitIn(b, f.Bare, nil, "ls-tree", "-r", "--name-only", ref), "\n") {
		files = append(files, [2]string{name, gitIn(b, f.Bare, nil, "cat-file", "blob", ref+":"+name)})
	}
	ps := Plans(n) // where each plan sits: its lease's origin
	var in bytes.Buffer
	for i := 1; i < n; i++ {
		slug := fmt.Sprintf("p%03d", i)
		fmt.Fprintf(&in, "commit %s%s\ncommitter fleetwatch <fleetwatch@localhost> %d +0000\ndata 6\nlease\n", LeaseRefs, slug, time.Now().Unix())
		for _, fl := range files {
			body := strings.ReplaceAll(fl[1], "bugs/"+template, path.Dir(ps[i].Rel)+"/"+template)
			body = strings.ReplaceAll(body, template, slug) + "\n"
			fmt.Fprintf(&in, "M 100644 inline %s\ndata %d\n%s\n", fl[0], len(body), body)
		}
	}
	gitIn(b, f.Bare, in.Bytes(), "fast-import", "--quiet")
}
func listOnce(b *testing.B, dir string) {
	if r := fwtest.Run(b, dir, "work-once", "--root", dir, "--agent-id", "reader", "--list"); r.Code != 0 {
		b.Fatalf("--list in %s: exit %d: %s", dir, r.Code, r.Stderr)
	}
}
