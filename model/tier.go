package model

import (
	"fmt"
	"strings"
)

// Tier is a worker's capability, ordered small < mid < reasoner < frontier.
type Tier int

const (
	NoTier Tier = iota
	Small
	Mid
	Reasoner
	Frontier
)

// Tiers lists the fit tiers in rank order.
var Tiers = []Tier{Small, Mid, Reasoner, Frontier}

func (t Tier) String() string {
	switch t {
	case Small:
		return "small"
	case Mid:
		return "mid"
	case Reasoner:
		return "reasoner"
	case Frontier:
		return "frontier"
	}
	return ""
}

// tierWord maps a plan's Preferred token to a tier; registry words are not tiers there.
func tierWord(s string) Tier {
	for _, t := range Tiers {
		if s == t.String() {
			return t
		}
	}
	return NoTier
}

// ParseTier reads a worker tier: a fit tier word, or an endpoints.yaml tier
// (swarm → small; executor, executor-heavy, detached → mid). Unlike anchor, an
// unknown word is an error rather than a silent mid.
func ParseTier(s string) (Tier, error) {
	w := strings.ToLower(strings.TrimSpace(s))
	if t := tierWord(w); t != NoTier {
		return t, nil
	}
	switch w {
	case "swarm":
		return Small, nil
	case "executor", "executor-heavy", "detached":
		return Mid, nil
	}
	return NoTier, fmt.Errorf("unknown tier %q (want small, mid, reasoner, frontier, swarm, executor, executor-heavy or detached)", s)
}
