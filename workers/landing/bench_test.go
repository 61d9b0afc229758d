package landing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// benchProject is a git project on dev with n review-needed plans, each
// with a branch feature/cNNN adding its own file (made with one
// fast-import), and fleetwatch.yaml holding settings.
func benchProject(tb testing.TB, n int, settings string) (*planfs.Tree, []string) {
	tb.Helper()
	return benchProjectBad(tb, n, settings, -1)
}

// benchProjectBad is benchProject whose change number bad adds a file
// named bad instead of its own (none when bad < 0).
func benchProjectBad(tb testing.TB, n int, settings string, bad int) (*planfs.Tree, []string) {
	tb.Helper()
	dir := tb.TempDir()
	if _, err := planfs.Scaffold(dir); err != nil {
		tb.Fatal(err)
	}
	var stream strings.Builder
	yaml := "integration: dev\n" + settings
	fmt.Fprintf(&stream, "commit refs/heads/dev\nmark :1\ncommitter t <t@example.com> 1700000000 +0000\ndata 4\nbase\nM 644 inline README\ndata 5\nbase\n\nM 644 inline fleetwatch.yaml\ndata %d\n%s\n", len(yaml), yaml)
	slugs := make([]string, n)
	for i := range slugs {
		slugs[i] = fmt.Sprintf("c%03d", i)
		content, file := slugs[i]+"\n", slugs[i]+".txt"
		if i == bad {
			file = "bad"
		}
		fmt.Fprintf(&stream, "commit refs/heads/feature/%s\ncommitter t <t@example.com> %d +0000\ndata 7\nchange\nfrom :1\nM 644 inline %s\ndata %d\n%s\n",
			slugs[i], 1700000001+i, file, len(content), content)
		plan := fmt.Sprintf("# Plan: %s\n\n## Goal\nDo it.\n", slugs[i])
		if err := os.WriteFile(filepath.Join(dir, ".plans", "review-needed", slugs[i]+".md"), []byte(plan), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"fast-import", "--quiet"}} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		if args[0] == "fast-import" {
			cmd.Stdin = strings.NewReader(stream.String())
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	// Checks gate as committed on dev; the working copy says the same.
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte(yaml), 0o644); err != nil {
		tb.Fatal(err)
	}
	t, err := planfs.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return t, slugs
}

// approveAndQueue writes a person's approve of each tip (planfs directly:
// landing's own tests) and queues it.
func approveAndQueue(tb testing.TB, t *planfs.Tree, slugs []string) {
	tb.Helper()
	for _, s := range slugs {
		tip, err := git(t.Project, "rev-parse", "feature/"+s)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := t.WriteApproval(s, tip, planfs.Agent("operator-bench")); err != nil {
			tb.Fatal(err)
		}
		if err := AddAs(t, s, "operator-bench"); err != nil {
			tb.Fatal(err)
		}
	}
}

func benchmarkQueueLand8(b *testing.B, depth int) {
	for b.Loop() {
		b.StopTimer()
		t, slugs := benchProject(b, 8, fmt.Sprintf("checks:\n  - {name: slow, run: [sleep, '2']}\nqueue: {depth: %d}\n", depth))
		approveAndQueue(b, t, slugs)
		b.StartTimer()
		start := time.Now()
		for range slugs {
			if _, err := Land(context.Background(), t, LandOptions{Actor: "operator-bench"}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/8-landings")
	}
}

// BenchmarkQueueLand8Depth1: 8 independent changes with a 2 s check land
// one after another (target ≤ 8 × 2 s + 5 s).
func BenchmarkQueueLand8Depth1(b *testing.B) { benchmarkQueueLand8(b, 1) }

// BenchmarkQueueLand8Depth3 is the same with speculative checks three deep
// (target ≤ 60 % of depth 1).
func BenchmarkQueueLand8Depth3(b *testing.B) { benchmarkQueueLand8(b, 3) }

// BenchmarkList200 is queue list on 200 candidates with a warm cache and
// an event log of 20,000 lines (target ≤ 300 ms).
func BenchmarkList200(b *testing.B) {
	t, slugs := benchProject(b, 200, "checks:\n  - {name: test, run: [go, test, ./...]}\n")
	var log strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&log, `{"ts":"2026-01-01T00:00:00Z","event":"claim","slug":"x%d","from":"features/x%d.md","to":"in-progress/x%d.md","agent_id":"w1"}`+"\n", i, i, i)
	}
	if err := os.WriteFile(filepath.Join(t.Project, ".plans", "logs", "events.jsonl"), []byte(log.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	approveAndQueue(b, t, slugs[:20])
	if _, err := List(t.Project); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		l, err := List(t.Project)
		if err != nil || len(l.Items) != 200 {
			b.Fatalf("%d items, %v", len(l.Items), err)
		}
	}
}

// benchmarkLand16 lands 16 independent changes, each checked by a real 2 s
// check (sleep 2, then fail when the tree holds the file bad), the 12th of
// them failing when failing is set, with settings' queue. The failing head
// is taken out of the queue by hand, as an operator landing one at a time
// would; a batch's bisection leaves it queued as failed.
func benchmarkLand16(b *testing.B, queue string, failing bool) {
	bad := -1
	if failing {
		bad = 11
	}
	for b.Loop() {
		b.StopTimer()
		t, slugs := benchProjectBad(b, 16, "checks:\n  - {name: slow, run: [sh, -c, 'sleep 2 && test ! -e bad']}\n"+queue, bad)
		approveAndQueue(b, t, slugs)
		b.StartTimer()
		start := time.Now()
		landed := 0
		for try := 0; try < 40; try++ {
			l, err := Land(context.Background(), t, LandOptions{Actor: "operator-bench"})
			switch {
			case err == nil:
				landed += max(1, len(l.Batch))
				continue
			case errors.Is(err, ErrNotReady) && landed < 15:
				_ = Remove(t, slugs[bad])
				continue
			case !errors.Is(err, ErrEmpty) && !errors.Is(err, ErrNotReady):
				b.Fatal(err)
			}
			break
		}
		if want := 16 - min(bad+1, 1); landed != want {
			b.Fatalf("landed %d, want %d", landed, want)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/16-changes")
	}
}

// BenchmarkLand16Depth1: one at a time, none failing.
func BenchmarkLand16Depth1(b *testing.B) { benchmarkLand16(b, "", false) }

// BenchmarkLand16Depth1Failing: one at a time, one failing.
func BenchmarkLand16Depth1Failing(b *testing.B) { benchmarkLand16(b, "", true) }

// BenchmarkLand16Batch8: batches of 8, none failing (target ≤ 20 % of
// depth 1).
func BenchmarkLand16Batch8(b *testing.B) { benchmarkLand16(b, "queue: {batch: 8}\n", false) }

// BenchmarkLand16Batch8Failing: batches of 8, one failing, found by
// bisection (target ≤ 35 % of depth 1).
func BenchmarkLand16Batch8Failing(b *testing.B) { benchmarkLand16(b, "queue: {batch: 8}\n", true) }

// BenchmarkListJSON100 is queue list --json's work (the listing and its
// JSON) with 100 changes queued, warm cache (target ≤ 300 ms).
func BenchmarkListJSON100(b *testing.B) {
	t, slugs := benchProject(b, 100, "checks:\n  - {name: test, run: [go, test, ./...]}\nqueue: {batch: 8}\n")
	approveAndQueue(b, t, slugs)
	if _, err := List(t.Project); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		l, err := List(t.Project)
		if err != nil || len(l.Items) != 100 {
			b.Fatalf("%d items, %v", len(l.Items), err)
		}
		if _, err := json.Marshal(l); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLandBatch8Of100 lands one batch of 8 with 100 changes queued
// and a check that passes at once: the queue's own cost, in git runs too.
func BenchmarkLandBatch8Of100(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		t, slugs := benchProject(b, 100, "checks:\n  - {name: t, run: [sh, -c, 'true']}\nqueue: {batch: 8}\n")
		approveAndQueue(b, t, slugs)
		b.StartTimer()
		runs := testkit.GitRuns(b, func() {
			if l, err := Land(context.Background(), t, LandOptions{}); err != nil || len(l.Batch) != 8 {
				b.Fatalf("%d landed, %v", len(l.Batch), err)
			}
		})
		b.ReportMetric(float64(runs), "git-runs")
	}
}
