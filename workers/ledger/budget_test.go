package ledger

import (
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
