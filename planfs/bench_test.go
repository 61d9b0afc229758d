package planfs

// Benchmarks for the scan and claim paths on generated trees of 1k, 10k and
// 100k plans. Targets (from the issue): one `work-once --list` process, which
// is BenchmarkScanCold, within 3× the time of reading the same files' first
// 4 KiB raw (BenchmarkRawRead4K, reported as the x-raw metric), and no
// quadratic step (100k ≈ 10 × 10k).
//
// The trees normally sit in the page cache (they were just written), so
// "cold" means no in-process cache, not a cold disk. BenchmarkClaimContention
// measures the claim protocol (O_EXCL lease, no-replace move, fsyncs) with
// 8 racing workers.

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/plangen"
	"github.com/fleetwatch/fleetwatch/model"
)

var benchWorker = model.Worker{AgentID: "bench", Tier: model.Mid}

// benchNow is the clock of BenchmarkClaimContention's fresh trees: mtimes
// spread over the 90 days before it, leases expire relative to it.
var benchNow = time.Now()

// benchGenerate writes an n-plan project into dir, scaffolded first (README,
// .gitignore, .gitkeep and logs/ as in a real project) so Write's final
// sync(2) covers it all.
func benchGenerate(dir string, n int) error {
	if _, err := Scaffold(dir); err != nil {
		return err
	}
	return plangen.Write(dir, n, benchNow)
}

// Generated trees live for the whole test process, because several
// benchmarks read the same one and 100k files take seconds to write.
// TestMain removes them.
var benchTrees = plangen.Trees{Pattern: "fleetwatch-planfs-bench-"}

// benchTree returns the project dir of the cached n-plan tree.
func benchTree(b *testing.B, n int) string {
	b.Helper()
	start := time.Now()
	d, err := benchTrees.Get(n, func(dir string) error {
		_, err := Scaffold(dir)
		b.Logf("generated %d plans in %v", n, time.Since(start).Round(time.Millisecond))
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// benchRawNs measures the raw baseline (plangen.RawBest) on dir once, just
// before a benchmark's loop: the machine may be busier or quieter later.
func benchRawNs(b *testing.B, dir string, n int) float64 {
	raw, err := plangen.RawBest(dir, n)
	if err != nil {
		b.Fatal(err)
	}
	return float64(raw)
}

// benchReport adds ns/plan (flat from 10k to 100k means no superlinear
// step) and, given the raw baseline, x-raw.
func benchReport(b *testing.B, n int, rawNs float64) {
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/float64(n), "ns/plan")
	if rawNs > 0 {
		b.ReportMetric(perOp/rawNs, "x-raw")
	}
}

func BenchmarkRawRead4K(b *testing.B) {
	for _, s := range plangen.Sizes {
		b.Run(s.Name, func(b *testing.B) {
			plans := filepath.Join(benchTree(b, s.N), Dir)
			for b.Loop() {
				if got, err := plangen.RawRead(plans); got != s.N || err != nil {
					b.Fatalf("read %d files, want %d (%v)", got, s.N, err)
				}
			}
			benchReport(b, s.N, 0)
		})
	}
}

// benchList is what one `work-once --list` process does to decide.
func benchList(b *testing.B, t *Tree, n int) []model.Row {
	snap, err := t.Scan()
	if err != nil {
		b.Fatal(err)
	}
	if len(snap.Plans) != n {
		b.Fatalf("scanned %d plans, want %d", len(snap.Plans), n)
	}
	return model.Decide(snap, benchWorker, model.Options{Now: float64(time.Now().UnixNano()) / 1e9, History: t.History()})
}

// BenchmarkScanCold is one `work-once --list` process: a new Tree (no cache),
// Scan, and Decide for a mid worker with git History.
func BenchmarkScanCold(b *testing.B) {
	for _, s := range plangen.Sizes {
		b.Run(s.Name, func(b *testing.B) {
			dir := benchTree(b, s.N)
			raw := benchRawNs(b, dir, s.N)
			for b.Loop() {
				t, err := Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				benchList(b, t, s.N)
			}
			benchReport(b, s.N, raw)
		})
	}
}

// BenchmarkScanWarm is the UI's refresh with nothing changed: one Tree
// reused, so every file is answered from the cache after a stat.
func BenchmarkScanWarm(b *testing.B) {
	for _, s := range plangen.Sizes {
		b.Run(s.Name, func(b *testing.B) {
			dir := benchTree(b, s.N)
			raw := benchRawNs(b, dir, s.N)
			t, err := Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			benchList(b, t, s.N)
			for b.Loop() {
				benchList(b, t, s.N)
			}
			benchReport(b, s.N, raw)
		})
	}
}

// BenchmarkScanWarmOneChanged is the UI's refresh after one plan changed:
// each iteration gives one file a new mtime (a µs next to the scan).
func BenchmarkScanWarmOneChanged(b *testing.B) {
	const n = 10_000
	dir := benchTree(b, n)
	t, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	snap, err := t.Scan()
	if err != nil {
		b.Fatal(err)
	}
	// Touch ready plans, restoring their mtimes afterwards for later benchmarks.
	var ready []model.Plan
	for _, p := range snap.Plans {
		if p.Lane.Ready() {
			ready = append(ready, p)
		}
	}
	raw := benchRawNs(b, dir, n)
	touched := map[string]int64{}
	defer func() {
		for rel, mt := range touched {
			os.Chtimes(t.Abs(rel), time.Unix(0, mt), time.Unix(0, mt))
		}
	}()
	i := 0
	for b.Loop() {
		p := ready[i%len(ready)]
		if _, ok := touched[p.Rel]; !ok {
			touched[p.Rel] = p.ModTime
		}
		mt := time.Unix(0, p.ModTime).Add(time.Duration(i+1) * time.Millisecond)
		if err := os.Chtimes(t.Abs(p.Rel), mt, mt); err != nil {
			b.Fatal(err)
		}
		i++
		benchList(b, t, n)
	}
	benchReport(b, n, raw)
}

// BenchmarkRescanOneChanged is the UI's refresh after one plan changed,
// as it runs now: the watcher's path noted, only that file read again.
func BenchmarkRescanOneChanged(b *testing.B) {
	const n = 10_000
	dir := benchTree(b, n)
	t, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	t.setWatched(1) // as a running watcher does
	defer t.setWatched(-1)
	if _, err := t.Rescan(); err != nil {
		b.Fatal(err)
	}
	p := t.Abs(string(plangen.Lane(0)) + "/" + plangen.File(0))
	for b.Loop() {
		t.noteChanged(p)
		snap, err := t.Rescan()
		if err != nil || len(snap.Plans) != n {
			b.Fatalf("%v: %d plans, want %d", err, len(snap.Plans), n)
		}
	}
}

// BenchmarkClaimContention drains a fresh 1k tree with 8 goroutines, each
// with its own Tree, as `work-once --max-plans N` does: one Scan, ClaimNext
// until it gives nothing, then a fresh Scan, until a fresh Scan gives nothing.
// ns/claim is the wall time per plan claimed; every plan eligible at the
// start must be claimed exactly once.
func BenchmarkClaimContention(b *testing.B) {
	const n, workers = 1_000, 8
	claims := 0
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		if err := benchGenerate(dir, n); err != nil {
			b.Fatal(err)
		}
		t0, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		want := len(model.Picks(benchList(b, t0, n), nil))
		got := make([][]string, workers)
		errs := make([]error, workers)
		var wg sync.WaitGroup
		b.StartTimer()
		for k := range workers {
			wg.Go(func() { got[k], errs[k] = benchDrain(dir, fmt.Sprintf("bench-%d", k)) })
		}
		wg.Wait()
		b.StopTimer()
		seen := map[string]bool{}
		for k, rels := range got {
			if errs[k] != nil {
				b.Fatal(errs[k])
			}
			for _, rel := range rels {
				if seen[rel] {
					b.Fatalf("%s claimed twice", rel)
				}
				seen[rel] = true
			}
		}
		if len(seen) != want {
			b.Errorf("claimed %d plans, want all %d eligible", len(seen), want)
		}
		claims += len(seen)
		os.RemoveAll(dir)
		b.StartTimer()
	}
	if claims > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(claims), "ns/claim")
		b.ReportMetric(float64(claims)/float64(b.N), "claims/op")
	}
}

// benchDrain claims for agent until a fresh scan yields nothing.
func benchDrain(dir, agent string) ([]string, error) {
	t, err := Open(dir)
	if err != nil {
		return nil, err
	}
	w := model.Worker{AgentID: agent, Tier: model.Mid}
	skip := map[string]bool{}
	var out []string
	for {
		snap, err := t.Scan()
		if err != nil {
			return out, err
		}
		opt := model.Options{Now: float64(time.Now().UnixNano()) / 1e9, History: t.History()}
		before := len(out)
		for {
			c, err := t.ClaimNext(snap, w, opt, DefaultTTL, skip)
			if err != nil {
				return out, err
			}
			if c.Rel == "" {
				break
			}
			out = append(out, c.Rel)
		}
		if len(out) == before {
			return out, nil
		}
	}
}
