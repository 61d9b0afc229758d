package config

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"
)

// Limits is the `limits:` section: caps on how many runs may hold a live
// lease at once, for the whole fleet, per host, per endpoint, per provider
// and per tier. A cap bounds concurrently running claims, never queued
// work. The zero value caps nothing.
//
//	limits:
//	  fleet: 12                        # the whole fleet
//	  host: 4                          # a number: every host
//	  endpoint: {claude: 3}            # a mapping: the ones named
//	  provider: {anthropic: 5, "*": 8} # "*": every one not named
//	  tier: {frontier: 2}
type Limits struct {
	// Fleet caps every run; 0 is no cap.
	Fleet int
	// Each is a cap for every name of a kind (host, endpoint, provider,
	// tier) that Named does not name.
	Each map[string]int
	// Named are the caps of single names, by kind.
	Named map[string]map[string]int
	Line  int // where the section is declared
}

// The kinds of caps a lease is counted under beside the fleet's.
const (
	CapHost     = "host"
	CapEndpoint = "endpoint"
	CapProvider = "provider"
	CapTier     = "tier"
)

// CapKinds are the kinds, in the order caps are checked and named.
var CapKinds = []string{CapHost, CapEndpoint, CapProvider, CapTier}

// CapTiers are the tier names a tier cap may name: the fit tiers a lease
// records (model's tier words; a test keeps the two the same).
var CapTiers = []string{"small", "mid", "reasoner", "frontier"}

// MaxCap bounds a cap: a larger one is a typo.
const MaxCap = 10000

// None reports whether no cap is set.
func (l Limits) None() bool { return l.Fleet == 0 && len(l.Each) == 0 && len(l.Named) == 0 }

// Max is the cap on name of kind, and whether there is one.
func (l Limits) Max(kind, name string) (int, bool) {
	if n, ok := l.Named[kind][name]; ok {
		return n, true
	}
	if n, ok := l.Each[kind]; ok && name != "" {
		return n, true
	}
	return 0, false
}

const limitKeys = "fleet, host, endpoint, provider, tier"

func parseCaps(val *yaml.Node) (Limits, error) {
	l := Limits{Line: val.Line}
	if isNull(val) {
		return l, nil
	}
	if val.Kind != yaml.MappingNode {
		return l, errorf(val.Line, "limits: want a mapping (%s), like limits: {fleet: 12, endpoint: {claude: 3}}", limitKeys)
	}
	err := eachKey(val, "limits: ", l.set)
	return l, err
}

// set reads one key of `limits:`: the fleet's cap or one kind's.
func (l *Limits) set(key, v *yaml.Node) error {
	var err error
	switch {
	case key.Value == "fleet":
		l.Fleet, err = parseCap("limits: fleet", v)
	case slices.Contains(CapKinds, key.Value):
		err = l.parseKind(key.Value, v)
	default:
		err = errorf(key.Line, "limits: unknown key %q (known: %s)", key.Value, limitKeys)
	}
	return err
}

// parseKind reads one kind's caps: a number for each of its names, or a
// mapping of names ("*" for every other) to numbers.
func (l *Limits) parseKind(kind string, v *yaml.Node) error {
	what := "limits: " + kind
	if v.Kind == yaml.ScalarNode {
		n, err := parseCap(what, v)
		if err == nil {
			l.Each = setIn(l.Each, kind, n)
		}
		return err
	}
	if v.Kind != yaml.MappingNode || len(v.Content) == 0 {
		return errorf(v.Line, "%s: want a number for each %s, or a mapping of names to numbers, like {%s: 3, \"*\": 5}", what, kind, exampleName(kind))
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		if err := l.parseNamed(kind, v.Content[i], v.Content[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// parseNamed reads the cap n of the name key of kind ("*" for every name
// without its own).
func (l *Limits) parseNamed(kind string, key, n *yaml.Node) error {
	what := "limits: " + kind
	name := key.Value
	if why := capNameProblem(kind, name); why != "" {
		return errorf(key.Line, "%s: %s", what, why)
	}
	if _, dup := l.Named[kind][name]; dup || (name == "*" && l.Each[kind] != 0) {
		return errorf(key.Line, "%s: %s is set twice", what, name)
	}
	c, err := parseCap(what+": "+name, n)
	if err != nil {
		return err
	}
	if name == "*" {
		l.Each = setIn(l.Each, kind, c)
		return nil
	}
	if l.Named == nil {
		l.Named = map[string]map[string]int{}
	}
	l.Named[kind] = setIn(l.Named[kind], name, c)
	return nil
}

// capNameProblem says why name cannot be capped under kind ("" when it can).
func capNameProblem(kind, name string) string {
	switch {
	case name == "*":
		return ""
	case name == "" || len(name) > 64 || strings.ContainsFunc(name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		return strconv.Quote(name) + " is not a name (one word, at most 64 characters)"
	case kind == CapTier && !slices.Contains(CapTiers, name):
		return "unknown tier " + strconv.Quote(name) + " (known: " + strings.Join(CapTiers, ", ") + ")"
	}
	return ""
}

func exampleName(kind string) string {
	switch kind {
	case CapHost:
		return "gpu-box"
	case CapProvider:
		return "anthropic"
	case CapTier:
		return "frontier"
	}
	return "claude"
}

// parseCap reads one cap: a whole number of runs, 1 to MaxCap.
func parseCap(what string, v *yaml.Node) (int, error) {
	n, err := strconv.Atoi(v.Value)
	if v.Kind != yaml.ScalarNode || err != nil || n < 1 || n > MaxCap {
		return 0, errorf(v.Line, "%s: want a whole number of runs from 1 to %d, not %q", what, MaxCap, v.Value)
	}
	return n, nil
}

func setIn(m map[string]int, k string, v int) map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	m[k] = v
	return m
}
