package ledger

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/spend"
	"github.com/fleetwatch/fleetwatch/planfs"
)

func TestSpentAndDailyBudgets(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	yesterday := now.AddDate(0, 0, -1)
	for i, r := range []Run{
		{Plan: "a", Endpoint: "claude", Tier: "frontier", Input: 900_000, Output: 100_000, CostUSD: 30, End: now},
		{Plan: "a", Endpoint: "claude", Tier: "frontier", Input: 5_000_000, CostUSD: 99, End: yesterday},
		{Plan: "b", Endpoint: "local", Tier: "small", Input: 10_000, End: now},
	} {
		r.ID = string(rune('a' + i))
		if err := Append(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	s, err := ReadSpent(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	if s.Plan["a"] != (Totals{6_000_000, 129}) || s.FleetDay != (Totals{1_010_000, 30}) || s.EndpointDay["claude"] != (Totals{1_000_000, 30}) {
		t.Errorf("%+v", s)
	}
	b := config.Budgets{EndpointDay: map[string]spend.Limit{"claude": {USD: 30}}, FleetDay: spend.Limit{Tokens: 2_000_000}}
	if why := DayProblem(b, s, "claude", "frontier"); !strings.Contains(why, "endpoint claude's daily budget ($30) is spent: 1M tokens, $30.00 today") {
		t.Errorf("claude: %q", why)
	}
	if why := DayProblem(b, s, "local", "small"); why != "" {
		t.Errorf("local: %q", why)
	}
	b.TierDay = map[string]spend.Limit{"small": {Tokens: 10_000}}
	if why := DayProblem(b, s, "local", "small"); !strings.Contains(why, "tier small's daily budget") {
		t.Errorf("small: %q", why)
	}
}

func TestNotDailyCountsForItsPlanOnly(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	for i, r := range []Run{
		{Plan: "a", Endpoint: "claude", Tier: "frontier", Input: 10_000_000, CostUSD: 100, Source: Reported, NotDaily: true, End: now},
		{Plan: "a", Endpoint: "claude", Tier: "frontier", Input: 1000, CostUSD: 1, Source: Metered, End: now},
	} {
		r.ID = string(rune('a' + i))
		if err := Append(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	s, err := ReadSpent(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	today, err := ReadToday(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	if s.Plan["a"] != (Totals{10_001_000, 101}) {
		t.Errorf("plan: %+v", s.Plan["a"])
	}
	for _, d := range []Spent{s, today} {
		if d.FleetDay != (Totals{1000, 1}) || d.EndpointDay["claude"] != (Totals{1000, 1}) || d.TierDay["frontier"] != (Totals{1000, 1}) {
			t.Errorf("a day's spend counts the report: %+v", d)
		}
	}
}

func TestExtensions(t *testing.T) {
	dir := t.TempDir()
	if l, err := Extended(dir, "a"); err != nil || !l.None() {
		t.Fatalf("none yet: %+v %v", l, err)
	}
	Extend(dir, Extension{Plan: "a", Tokens: 1_000_000, By: "op", At: time.Now()})
	Extend(dir, Extension{Plan: "a", USD: 2.5, By: "op", At: time.Now()})
	Extend(dir, Extension{Plan: "b", Tokens: 7, By: "op", At: time.Now()})
	if err := Extend(dir, Extension{Plan: "a"}); err == nil {
		t.Error("an empty extension was recorded")
	}
	l, err := Extended(dir, "a")
	if err != nil || l != (spend.Limit{Tokens: 1_000_000, USD: 2.5}) {
		t.Errorf("%+v %v", l, err)
	}
	if r := Raise(spend.Limit{Tokens: 2_000_000}, l); r != (spend.Limit{Tokens: 3_000_000}) {
		t.Errorf("raise %+v", r)
	}
	if f := (Totals{Tokens: 1_500_000, USD: 1}).Fraction(spend.Limit{Tokens: 2_000_000, USD: 4}); f != 0.75 {
		t.Errorf("fraction %v", f)
	}
}

func TestReadFleet(t *testing.T) {
	dir := t.TempDir()
	if _, err := planfs.Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("budgets:\n  fleet_day: {usd: 10}\n  tier_day: {mid: {tokens: 1M}}\n"), 0o644)
	now := time.Now()
	Append(dir, Run{ID: "1", Plan: "a", Tier: "mid", Input: 500_000, CostUSD: 12, Start: now, End: now})
	tr, _ := planfs.Open(dir)
	f, err := ReadFleet(tr, now)
	if err != nil {
		t.Fatal(err)
	}
	if f.Today != (Totals{500_000, 12}) || len(f.Gauges) != 2 || f.Gauges[1].What != "tier mid today" || f.Gauges[1].Share() != 0.5 {
		t.Errorf("%+v", f)
	}
	if !strings.Contains(f.Problem, "the fleet's daily budget ($10) is spent") || len(f.Tiers) != 1 || f.Tiers[0].Key != "mid" {
		t.Errorf("problem %q tiers %+v", f.Problem, f.Tiers)
	}
}

// A day read from the ledger's tail is the day a whole read gives, on a
// ledger far longer than the tail's first window.
func TestReadTodayReadsTheTail(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	p := filepath.Join(dir, File)
	os.MkdirAll(filepath.Dir(p), 0o755)
	f, _ := os.Create(p)
	for i := range 20_000 {
		r := run(i, "old", "mid", 10, 1, 0.01)
		r.ID, r.End = fmt.Sprint("old-", i), now.AddDate(0, 0, -30)
		line, _ := jsonLine(r)
		f.Write(line)
	}
	f.Close()
	for i := range 50 {
		r := run(i, "new", "mid", 100, 10, 0.5)
		r.ID, r.End, r.Endpoint = fmt.Sprint("new-", i), now, "claude"
		Append(dir, r)
	}
	whole, _ := ReadSpent(dir, now)
	tail, err := ReadToday(dir, now)
	if err != nil || tail.FleetDay != whole.FleetDay || tail.EndpointDay["claude"] != (Totals{5500, 25}) {
		t.Errorf("tail %+v whole %+v %v", tail.FleetDay, whole.FleetDay, err)
	}
	os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("budgets:\n  endpoint_day: {claude: {usd: 20}, local: {usd: 1}}\n"), 0o644)
	w := SpentBudgets(dir, now)
	if len(w) != 1 || w[0].File != "fleetwatch.yaml" || !strings.Contains(w[0].Message, "endpoint claude's daily budget ($20) is spent: 5.5k tokens, $25.00 today") {
		t.Errorf("%+v", w)
	}
	os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), nil, 0o644)
	if w := SpentBudgets(dir, now); w != nil {
		t.Errorf("no budgets, yet %+v", w)
	}
}
