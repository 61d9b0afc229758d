package config

import (
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/spend"
)

func TestPricesAndBudgets(t *testing.T) {
	s, err := Parse([]byte(`prices:
  claude-sonnet-4-5: {input: 3, output: 15, cache_read: 0.3}
  qwen3-32b: {input: 0, output: 0}
budgets:
  run: {tokens: 2M, usd: 5}
  plan: {tokens: 10M}
  fleet_day: {usd: "$100"}
  endpoint_day: {claude: {usd: 40}}
  tier_day: {frontier: {tokens: 1.5M}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Prices["claude-sonnet-4-5"]; p != (Price{Input: 3, Output: 15, CacheRead: 0.3}) {
		t.Errorf("price %+v", p)
	}
	if _, ok := s.Prices["qwen3-32b"]; !ok {
		t.Error("a free model has a price of 0, not none")
	}
	b := s.Budgets
	if b.Run != (spend.Limit{Tokens: 2_000_000, USD: 5}) || b.Plan != (spend.Limit{Tokens: 10_000_000}) || b.FleetDay != (spend.Limit{USD: 100}) ||
		b.EndpointDay["claude"] != (spend.Limit{USD: 40}) || b.TierDay["frontier"] != (spend.Limit{Tokens: 1_500_000}) {
		t.Errorf("budgets %+v", b)
	}
	if got := b.Run.String(); got != "2M tokens, $5" {
		t.Errorf("String %q", got)
	}
}

func TestSpendSettingsRefuseBadValues(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"budgets: {run: {tokens: lots}}", `1: budgets: run: tokens: want a token count above 0, like 2M or 500k, not "lots"`},
		{"budgets: {run: {usd: -3}}", `1: budgets: run: usd: want dollars above 0`},
		{"budgets: {week: {usd: 3}}", `1: budgets: unknown key "week"`},
		{"budgets:\n  run: {tokenz: 3}", `2: budgets: run: tokenz: unknown key "tokenz" (known: tokens, usd)`},
		{"budgets: {endpoint_day: 5}", `1: budgets: endpoint_day: want a name per limit`},
		{"prices: {m: {input: cheap}}", `1: prices: m: input: want USD per million tokens, like 3 or 0.3, not "cheap"`},
		{"prices: {m: {inptu: 3}}", `1: prices: m: unknown key "inptu"`},
		{"prices: [a, b]", `1: prices: want a price per model`},
	} {
		_, err := Parse([]byte(c.text))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}

func TestReportedMaxDefaultsWhereUnset(t *testing.T) {
	if got := (Budgets{}).ReportedMax(); got != (spend.Limit{Tokens: 10_000_000, USD: 100}) {
		t.Errorf("unset: %+v", got)
	}
	s, err := Parse([]byte("budgets:\n  reported_max: {usd: 20}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Budgets.ReportedMax(); got != (spend.Limit{Tokens: 10_000_000, USD: 20}) {
		t.Errorf("usd set: %+v", got)
	}
	if _, err := Parse([]byte("budgets: {reported_max: {tokens: -1}}")); err == nil {
		t.Error("a negative reported_max was taken")
	}
}
