// Package spend holds the units budgets are written in: token counts
// (2M, 500k) and dollars ($5), read the same in fleetwatch.yaml and in a
// plan's `- **Budget:**` line.
package spend

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Limit is a budget: tokens and/or dollars; 0 is no limit of that kind.
type Limit struct {
	Tokens int64
	USD    float64
}

// None reports whether l limits nothing.
func (l Limit) None() bool { return l.Tokens == 0 && l.USD == 0 }

// String is l as the file writes it: "2M tokens, $5".
func (l Limit) String() string {
	var parts []string
	if l.Tokens > 0 {
		parts = append(parts, FormatTokens(l.Tokens)+" tokens")
	}
	if l.USD > 0 {
		parts = append(parts, "$"+strconv.FormatFloat(l.USD, 'f', -1, 64))
	}
	return strings.Join(parts, ", ")
}

// ParseTokens reads a token count: 2000000, 2M, 500k, 1.5M.
func ParseTokens(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	mult := 1.0
	switch {
	case strings.HasSuffix(t, "k"):
		mult, t = 1e3, t[:len(t)-1]
	case strings.HasSuffix(t, "m"):
		mult, t = 1e6, t[:len(t)-1]
	case strings.HasSuffix(t, "g") || strings.HasSuffix(t, "b"):
		mult, t = 1e9, t[:len(t)-1]
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(t, "_", ""), 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) || f*mult > 1e15 {
		return 0, fmt.Errorf("want a token count above 0, like 2M or 500k, not %q", s)
	}
	return int64(math.Round(f * mult)), nil
}

// ParseUSD reads dollars: 5, 5.50, $5.
func ParseUSD(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(s), "$"), 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) || f > 1e9 {
		return 0, fmt.Errorf("want dollars above 0, like 5 or 12.50, not %q", s)
	}
	return f, nil
}

// FormatTokens writes n the way ParseTokens reads it: 2M, 1.5M, 500k.
func FormatTokens(n int64) string {
	switch {
	case n >= 1e6:
		return strconv.FormatFloat(math.Round(float64(n)/1e5)/10, 'f', -1, 64) + "M"
	case n >= 1e3:
		return strconv.FormatFloat(math.Round(float64(n)/1e2)/10, 'f', -1, 64) + "k"
	}
	return strconv.FormatInt(n, 10)
}

// ParseLimit reads a plan header's budget: "2M tokens, $5", "500k tokens"
// or "$5" — a token count, dollars, or both, comma-separated.
func ParseLimit(s string) (Limit, error) {
	var l Limit
	for _, part := range strings.Split(s, ",") {
		p := strings.TrimSpace(part)
		switch {
		case p == "":
			continue
		case strings.HasPrefix(p, "$"):
			usd, err := ParseUSD(p)
			if err != nil {
				return l, err
			}
			l.USD = usd
		default:
			n, err := ParseTokens(strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(p, "tokens"), "token")))
			if err != nil {
				return l, err
			}
			l.Tokens = n
		}
	}
	if l.None() {
		return l, fmt.Errorf("want tokens and/or dollars, like 2M tokens, $5, not %q", s)
	}
	return l, nil
}
