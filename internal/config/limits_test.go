package config

import (
	"strings"
	"testing"
)

func TestLimits(t *testing.T) {
	s, err := Parse([]byte(`limits:
  fleet: 12
  host: 4
  endpoint: {claude: 3}
  provider: {anthropic: 5, "*": 8}
  tier: {frontier: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	l := s.Limits
	for _, c := range []struct {
		kind, name string
		want       int
		ok         bool
	}{
		{CapHost, "gpu-box", 4, true},
		{CapHost, "", 0, false}, // a lease naming no host counts under no host's cap
		{CapEndpoint, "claude", 3, true},
		{CapEndpoint, "local", 0, false},
		{CapProvider, "anthropic", 5, true},
		{CapProvider, "openai", 8, true},
		{CapTier, "frontier", 2, true},
		{CapTier, "mid", 0, false},
	} {
		if n, ok := l.Max(c.kind, c.name); n != c.want || ok != c.ok {
			t.Errorf("Max(%s, %q) = %d, %v; want %d, %v", c.kind, c.name, n, ok, c.want, c.ok)
		}
	}
	if l.Fleet != 12 || l.None() {
		t.Errorf("limits %+v", l)
	}
	if s, _ := Parse([]byte("limits:\n")); !s.Limits.None() {
		t.Errorf("an empty limits: caps something: %+v", s.Limits)
	}
}

func TestLimitsRefuseBadValues(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"limits: 3", `1: limits: want a mapping (fleet, host, endpoint, provider, tier)`},
		{"limits: {fleet: 0}", `1: limits: fleet: want a whole number of runs from 1 to 10000, not "0"`},
		{"limits: {fleet: -2}", `1: limits: fleet: want a whole number of runs from 1 to 10000, not "-2"`},
		{"limits: {fleet: 2.5}", `1: limits: fleet: want a whole number of runs`},
		{"limits: {fleet: lots}", `1: limits: fleet: want a whole number of runs`},
		{"limits: {fleet: [3]}", `1: limits: fleet: want a whole number of runs`},
		{"limits:\n  fleet: 3\n  hosts: {a: 1}", `3: limits: unknown key "hosts" (known: fleet, host, endpoint, provider, tier)`},
		{"limits:\n  fleet: 3\n  fleet: 4", `3: limits: fleet is set twice (first at line 2)`},
		{"limits:\n  endpoint:\n    claude: many", `3: limits: endpoint: claude: want a whole number of runs from 1 to 10000, not "many"`},
		{"limits:\n  endpoint: {claude: 3, claude: 4}", `2: limits: endpoint: claude is set twice`},
		{"limits:\n  tier: {swarm: 2}", `2: limits: tier: unknown tier "swarm" (known: small, mid, reasoner, frontier)`},
		{"limits:\n  host: {\"gpu box\": 2}", `2: limits: host: "gpu box" is not a name`},
		{"limits:\n  provider: []", `2: limits: provider: want a number for each provider, or a mapping of names to numbers, like {anthropic: 3, "*": 5}`},
		{"limits:\n  host: 99999", `2: limits: host: want a whole number of runs from 1 to 10000, not "99999"`},
	} {
		_, err := Parse([]byte(c.text))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: the error is more than one line: %q", c.text, err)
		}
	}
}
