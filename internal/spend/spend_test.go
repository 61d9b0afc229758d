package spend

import "testing"

func TestTokens(t *testing.T) {
	for s, want := range map[string]int64{"2M": 2_000_000, "500k": 500_000, "1.5m": 1_500_000, "1200": 1200, "2_000": 2000} {
		if n, err := ParseTokens(s); err != nil || n != want {
			t.Errorf("%s: %d %v", s, n, err)
		}
	}
	for n, want := range map[int64]string{2_000_000: "2M", 1_500_000: "1.5M", 500_000: "500k", 999: "999", 1_234_567: "1.2M"} {
		if got := FormatTokens(n); got != want {
			t.Errorf("%d: %q, want %q", n, got, want)
		}
	}
}

func TestParseLimit(t *testing.T) {
	for s, want := range map[string]Limit{
		"2M tokens, $5": {Tokens: 2_000_000, USD: 5}, "500k tokens": {Tokens: 500_000}, "$12.50": {USD: 12.5}, "$5, 1M": {Tokens: 1_000_000, USD: 5},
	} {
		if got, err := ParseLimit(s); err != nil || got != want {
			t.Errorf("%q: %+v %v", s, got, err)
		}
	}
	for _, bad := range []string{"", "lots", "$-1", "2M tokens, $x", ","} {
		if _, err := ParseLimit(bad); err == nil {
			t.Errorf("%q was read", bad)
		}
	}
}
