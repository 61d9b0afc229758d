package ledger

import (
	"fleetwatch/planfs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fleetwatch/internal/config"
	"fleetwatch/internal/spend"
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
