package config

import (
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/fleetwatch/fleetwatch/internal/spend"
)

// Price is what a model costs (`prices: {MODEL: {input: …, output: …,
// cache_read: …}}`), in USD per million tokens.
type Price struct {
	Input, Output, CacheRead float64
}

// Budgets are the `budgets:` section: per run, per plan (across all its
// runs), the whole fleet per day, and each endpoint's and tier's day.
type Budgets struct {
	Run, Plan, FleetDay  spend.Limit
	EndpointDay, TierDay map[string]spend.Limit
	// Reported is `reported_max:`, the most one run's own report of its
	// usage counts for (ReportedMax fills in the defaults).
	Reported spend.Limit
	Line     int
}

const budgetKeys = "run, plan, fleet_day, endpoint_day, tier_day, reported_max"

// What an agent's report of its own usage counts for at most, per run,
// when `budgets: reported_max:` does not say.
const (
	DefaultReportedTokens = 10_000_000
	DefaultReportedUSD    = 100
)

// ReportedMax is the most one run's own report counts for: reported_max's
// figures, the defaults where it sets none.
func (b Budgets) ReportedMax() spend.Limit {
	l := b.Reported
	if l.Tokens <= 0 {
		l.Tokens = DefaultReportedTokens
	}
	if l.USD <= 0 {
		l.USD = DefaultReportedUSD
	}
	return l
}

func parseBudgets(val *yaml.Node) (Budgets, error) {
	b := Budgets{Line: val.Line}
	if isNull(val) {
		return b, nil
	}
	if val.Kind != yaml.MappingNode {
		return b, errorf(val.Line, "budgets: want a mapping (%s), like budgets: {run: {tokens: 2M, usd: 5}}", budgetKeys)
	}
	err := eachKey(val, "budgets: ", b.set)
	return b, err
}

// set reads one key of `budgets:`.
func (b *Budgets) set(key, v *yaml.Node) error {
	var err error
	switch key.Value {
	case "run":
		b.Run, err = parseLimit("budgets: run", v)
	case "plan":
		b.Plan, err = parseLimit("budgets: plan", v)
	case "fleet_day":
		b.FleetDay, err = parseLimit("budgets: fleet_day", v)
	case "endpoint_day":
		b.EndpointDay, err = parseLimits("budgets: endpoint_day", v)
	case "tier_day":
		b.TierDay, err = parseLimits("budgets: tier_day", v)
	case "reported_max":
		b.Reported, err = parseLimit("budgets: reported_max", v)
	default:
		err = errorf(key.Line, "budgets: unknown key %q (known: %s)", key.Value, budgetKeys)
	}
	return err
}

// parseLimits reads a mapping of names to limits.
func parseLimits(what string, val *yaml.Node) (map[string]spend.Limit, error) {
	if val.Kind != yaml.MappingNode {
		return nil, errorf(val.Line, "%s: want a name per limit, like {mid: {usd: 40}}", what)
	}
	out := map[string]spend.Limit{}
	for i := 0; i+1 < len(val.Content); i += 2 {
		key, v := val.Content[i], val.Content[i+1]
		if _, dup := out[key.Value]; dup {
			return nil, errorf(key.Line, "%s: %s is set twice", what, key.Value)
		}
		l, err := parseLimit(what+": "+key.Value, v)
		if err != nil {
			return nil, err
		}
		out[key.Value] = l
	}
	return out, nil
}

// parseLimit reads {tokens: 2M, usd: 5}.
func parseLimit(what string, val *yaml.Node) (spend.Limit, error) {
	var l spend.Limit
	if val.Kind != yaml.MappingNode || len(val.Content) == 0 {
		return l, errorf(val.Line, "%s: want tokens and/or usd, like {tokens: 2M, usd: 5}", what)
	}
	for i := 0; i+1 < len(val.Content); i += 2 {
		key, v := val.Content[i], val.Content[i+1]
		var err error
		switch key.Value {
		case "tokens":
			l.Tokens, err = spend.ParseTokens(v.Value)
		case "usd":
			l.USD, err = spend.ParseUSD(v.Value)
		default:
			err = fmt.Errorf("unknown key %q (known: tokens, usd)", key.Value)
		}
		if err != nil || v.Kind != yaml.ScalarNode {
			if err == nil {
				err = fmt.Errorf("want one value")
			}
			return l, errorf(v.Line, "%s: %s: %v", what, key.Value, err)
		}
	}
	return l, nil
}

func parsePrices(val *yaml.Node) (map[string]Price, error) {
	if isNull(val) {
		return nil, nil
	}
	if val.Kind != yaml.MappingNode {
		return nil, errorf(val.Line, "prices: want a price per model, like prices: {claude-sonnet-4-5: {input: 3, output: 15, cache_read: 0.3}}")
	}
	out := map[string]Price{}
	for i := 0; i+1 < len(val.Content); i += 2 {
		key, v := val.Content[i], val.Content[i+1]
		if _, dup := out[key.Value]; dup {
			return nil, errorf(key.Line, "prices: %s is set twice", key.Value)
		}
		p, err := parsePrice(key.Value, v)
		if err != nil {
			return nil, err
		}
		out[key.Value] = p
	}
	return out, nil
}

func parsePrice(name string, val *yaml.Node) (Price, error) {
	var p Price
	if val.Kind != yaml.MappingNode {
		return p, errorf(val.Line, "prices: %s: want {input: USD per 1M tokens, output: …, cache_read: …}", name)
	}
	for i := 0; i+1 < len(val.Content); i += 2 {
		key, v := val.Content[i], val.Content[i+1]
		f, err := strconv.ParseFloat(v.Value, 64)
		if v.Kind != yaml.ScalarNode || err != nil || f < 0 || f > 1e6 {
			return p, errorf(v.Line, "prices: %s: %s: want USD per million tokens, like 3 or 0.3, not %q", name, key.Value, v.Value)
		}
		switch key.Value {
		case "input":
			p.Input = f
		case "output":
			p.Output = f
		case "cache_read":
			p.CacheRead = f
		default:
			return p, errorf(key.Line, "prices: %s: unknown key %q (known: input, output, cache_read)", name, key.Value)
		}
	}
	return p, nil
}
