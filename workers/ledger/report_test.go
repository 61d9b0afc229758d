package ledger

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs"
)

func TestParseResult(t *testing.T) {
	for text, want := range map[string]string{
		"# Plan\n\n## Result\n\nSuccess: the route is in.\n":         ClaimSuccess,
		"## Result\nIt should work, but I could not run the tests\n": ClaimShouldWork,
		"## Result\n- blocked: the schema is missing\n":              ClaimBlocked,
		"## Results of the survey\nnothing\n":                        ClaimUnspecified,
		"no section\nsuccess\n":                                      ClaimUnspecified,
		"## Result\n\n## Next\nsuccess\n":                            ClaimUnspecified,
		"## Result\nblocked at first, then success\n":                ClaimBlocked,
	} {
		if got := ParseResult(text); got != want {
			t.Errorf("%q: %q, want %q", text, got, want)
		}
	}
}

// A ledger with known runs and an event log with known outcomes gives
// known figures: mid landed one plan of two at $3 of runs, its first
// checks passed on one of two, and one plan said done but failed them.
func TestReportFigures(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	ts := func(min int) string { return at(min).Format(time.RFC3339Nano) }
	runs := []Run{
		{ID: "1", Plan: "a", Tier: "mid", Input: 1000, Output: 100, CostUSD: 1, Start: at(0), End: at(10), Claim: ClaimSuccess},
		{ID: "2", Plan: "a", Tier: "mid", Input: 1000, Output: 100, CostUSD: 1, Start: at(20), End: at(30), Claim: ClaimSuccess},
		{ID: "3", Plan: "b", Tier: "mid", Input: 500, Output: 50, CostUSD: 1, Start: at(0), End: at(5), Claim: ClaimSuccess},
		{ID: "4", Plan: "c", Tier: "frontier", Input: 9000, Output: 900, CostUSD: 6, Start: at(0), End: at(40), Claim: ClaimShouldWork},
	}
	events := []planfs.Event{
		{Event: "complete", Slug: "a", To: "review-needed/a.md", TS: ts(10)},
		{Event: "review", Slug: "a", Reason: "REVISE at abc", TS: ts(12)},
		{Event: "needs-work", Slug: "a", TS: ts(13)},
		{Event: "checks", Slug: "a", Reason: "pass", TS: ts(31)},
		{Event: "approve", Slug: "a", TS: ts(32)},
		{Event: "land", Slug: "a", TS: ts(60)},
		{Event: "complete", Slug: "b", To: "review-needed/b.md", TS: ts(5)},
		{Event: "checks", Slug: "b", Reason: "fail: test", TS: ts(6)},
		{Event: "scope-violation", Slug: "b", TS: ts(4)},
		{Event: "complete", Slug: "c", To: "review-needed/c.md", TS: ts(40)},
		{Event: "review", Slug: "c", Reason: "ACCEPT at def", TS: ts(41)},
		{Event: "checks", Slug: "c", Reason: "pass", TS: ts(42)},
		{Event: "land", Slug: "c", TS: ts(50)},
	}
	o := NewOutcomes(events, "tier")
	for _, r := range runs {
		o.Add(r)
	}
	got := o.Lines()
	if len(got) != 2 {
		t.Fatalf("%+v", got)
	}
	fr, mid := got[0], got[1]
	want := Line{Key: "mid", Runs: 3, Plans: 2, Landed: 1, Tokens: 2750, CostUSD: 3, CostPerLanded: 3, TokensPerLanded: 2750,
		FirstCheckPass: 0.5, Checked: 2, NeedsWorkRate: 0.5, SendBackRate: 0.5, Reviewed: 2, ScopeViolations: 1, MedianToLand: 3600, SaidDoneFailed: 1}
	if mid != want {
		t.Errorf("mid:\n got %+v\nwant %+v", mid, want)
	}
	if fr.Key != "frontier" || fr.Landed != 1 || fr.CostPerLanded != 6 || fr.FirstCheckPass != 1 || fr.NeedsWorkRate != 0 || math.Abs(fr.MedianToLand-3000) > 1e-9 {
		t.Errorf("frontier %+v", fr)
	}
}

// BenchmarkReport100k is `fleetwatch report` over a ledger of 100,000
// runs and their plans' events (target ≤ 300 ms).
func BenchmarkReport100k(b *testing.B) {
	dir := b.TempDir()
	tiers := []string{"small", "mid", "reasoner", "frontier"}
	var events []planfs.Event
	t0 := time.Now().Add(-48 * time.Hour)
	for i := range 20_000 {
		slug := fmt.Sprintf("plan-%d", i)
		ts := t0.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano)
		events = append(events, planfs.Event{Event: "complete", Slug: slug, To: "review-needed/" + slug + ".md", TS: ts},
			planfs.Event{Event: "checks", Slug: slug, Reason: "pass", TS: ts}, planfs.Event{Event: "land", Slug: slug, TS: ts})
	}
	for i := range 100_000 {
		r := run(i%48, fmt.Sprintf("plan-%d", i%20_000), tiers[i%4], 1000, 100, 0.01)
		r.ID = fmt.Sprintf("run-%d", i)
		if err := Append(dir, r); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		o := NewOutcomes(events, "tier")
		if _, err := Read(dir, time.Time{}, o.Add); err != nil {
			b.Fatal(err)
		}
		if lines := o.Lines(); len(lines) != 4 {
			b.Fatalf("%d lines: %+v", len(lines), lines)
		}
	}
}
