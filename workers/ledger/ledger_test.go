package ledger

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/workers/meter"
)

var day = time.Date(2026, 12, 1, 10, 0, 0, 0, time.Local)

func run(i int, plan, tier string, in, out int64, cost float64) Run {
	return Run{ID: fmt.Sprintf("r%d", i), Plan: plan, Agent: "w" + tier, Tier: tier, Endpoint: tier + "-ep", Model: "m-" + tier,
		Input: in, Output: out, CostUSD: cost, Priced: true, Source: Metered,
		Start: day.Add(time.Duration(i) * time.Hour), End: day.Add(time.Duration(i)*time.Hour + 10*time.Minute)}
}

func TestAppendReadSum(t *testing.T) {
	dir := t.TempDir()
	runs := []Run{
		run(0, "a", "small", 1000, 100, 0.01),
		run(1, "a", "mid", 5000, 500, 0.20),
		run(30, "b", "mid", 2000, 200, 0.10),
	}
	runs[2].Priced, runs[2].Source = false, Reported
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Go(func() {
			if err := Append(dir, r); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var got []Run
	bad, err := Read(dir, time.Time{}, func(r Run) { got = append(got, r) })
	if err != nil || bad != 0 || len(got) != 3 {
		t.Fatalf("read %d runs, %d bad, %v", len(got), bad, err)
	}
	byTier := sum(got, "tier")
	if len(byTier) != 2 || byTier[0].Key != "mid" || byTier[0].Runs != 2 || byTier[0].Input != 7000 || byTier[0].Unpriced != 1 || byTier[0].Reported != 1 {
		t.Errorf("by tier: %+v", byTier)
	}
	if c := byTier[0].CostUSD; c < 0.2999 || c > 0.3001 {
		t.Errorf("mid's cost %v", c)
	}
	byDay := sum(got, "day")
	if len(byDay) != 2 || byDay[0].Key != "2026-12-01" || byDay[1].Key != "2026-12-02" {
		t.Errorf("by day: %+v", byDay)
	}
	var since []Run
	Read(dir, day.Add(24*time.Hour), func(r Run) { since = append(since, r) })
	if len(since) != 1 || since[0].Plan != "b" {
		t.Errorf("--since: %+v", since)
	}
}

// A torn or foreign line is skipped and counted; the rest still read.
func TestReadSkipsBadLines(t *testing.T) {
	dir := t.TempDir()
	Append(dir, run(0, "a", "small", 1, 1, 0))
	f, _ := os.OpenFile(filepath.Join(dir, File), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("{\"run\":\"torn\",\"inp\n{}\nnot json\n")
	f.Close()
	Append(dir, run(1, "b", "small", 1, 1, 0))
	n := 0
	bad, err := Read(dir, time.Time{}, func(Run) { n++ })
	if err != nil || n != 2 || bad != 3 {
		t.Errorf("%d runs, %d bad, %v", n, bad, err)
	}
}

// The ledger is never written through a symlink planted in its place.
func TestAppendRefusesASymlink(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "var/fleet/usage"), 0o755)
	target := filepath.Join(t.TempDir(), "elsewhere")
	os.Symlink(target, filepath.Join(dir, File))
	if err := Append(dir, run(0, "a", "small", 1, 1, 0)); err == nil {
		t.Fatal("wrote through a symlink")
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("the symlink's target was created")
	}
}

func TestPriced(t *testing.T) {
	prices := map[string]meter.Price{"m": {Input: 1, Output: 2}}
	if c, ok := Priced(meter.Usage{Input: 1e6, Output: 1e6, Model: "m"}, prices); !ok || c != 3 {
		t.Errorf("priced: %v %v", c, ok)
	}
	if _, ok := Priced(meter.Usage{Input: 10, Model: "other"}, prices); ok {
		t.Error("a model with no price was priced")
	}
	if c, ok := Priced(meter.Usage{Input: 10, Model: "other", CostUSD: 0.5}, prices); !ok || c != 0.5 {
		t.Errorf("a reported cost: %v %v", c, ok)
	}
}

// BenchmarkUsage100k reads and sums a ledger of 100,000 runs, as
// `fleetwatch usage` does (target ≤ 300 ms).
func BenchmarkUsage100k(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, File)
	os.MkdirAll(filepath.Dir(p), 0o755)
	f, _ := os.Create(p)
	tiers := []string{"small", "mid", "reasoner", "frontier"}
	for i := range 100_000 {
		r := run(i%2000, fmt.Sprintf("plan-%d", i%3000), tiers[i%4], int64(1000+i%7000), int64(100+i%900), float64(i%50)/100)
		r.ID = fmt.Sprintf("run-%d", i)
		line, _ := jsonLine(r)
		f.Write(line)
	}
	f.Close()
	b.ResetTimer()
	for range b.N {
		sums := NewSums("plan")
		if _, err := Read(dir, time.Time{}, sums.Add); err != nil {
			b.Fatal(err)
		}
		if g := sums.Groups(); len(g) != 3000 {
			b.Fatalf("%d groups", len(g))
		}
	}
}

func jsonLine(r Run) ([]byte, error) {
	b, err := json.Marshal(r)
	return append(b, '\n'), err
}

func sum(runs []Run, by string) []Group {
	s := NewSums(by)
	for _, r := range runs {
		s.Add(r)
	}
	return s.Groups()
}

// The fast scan and encoding/json read every line alike: plain lines, and
// lines with escapes, unknown keys or another key order (which fall back).
func TestFastScanMatchesJSON(t *testing.T) {
	r := run(3, "plain", "mid", 12, 34, 0.5)
	r.Host, r.Exit, r.Cached = "gpu-1", 2, 7
	odd := r
	odd.Plan, odd.Model = `quote " and \ slash`, "ünïcode"
	lines := []string{}
	for _, x := range []Run{r, odd} {
		l, _ := jsonLine(x)
		lines = append(lines, string(l))
	}
	lines = append(lines, `{"end":"2026-12-01T10:10:00+00:00","run":"x","extra":true,"input_tokens":5,"nested":{"a":1}}`)
	for _, l := range lines {
		got, err := parseRun([]byte(l))
		var want Run
		werr := json.Unmarshal([]byte(l), &want)
		if (err == nil) != (werr == nil) || !got.Start.Equal(want.Start) || !got.End.Equal(want.End) {
			t.Fatalf("%s: %v / %v", l, err, werr)
		}
		got.Start, got.End, want.Start, want.End = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if got != want {
			t.Errorf("%s:\n fast %+v\n json %+v", l, got, want)
		}
	}
}
