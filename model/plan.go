package model

import (
	"cmp"
	"strings"
)

// Plan is one plan file as the last scan saw it.
type Plan struct {
	Rel     string // relative to .plans/, e.g. "features/foo.md"
	Lane    Lane
	Name    string // file name
	Slug    string
	Local   bool  // a private `*.local.md` plan
	ModTime int64 // Unix nanoseconds
	Size    int64
	Header  Header
}

// Snapshot is the whole tree at one moment: every plan, every lease file, and
// what could not be read. Rules take it and never change it.
type Snapshot struct {
	Plans    []Plan
	Leases   []Lease
	Warnings []Warning
	// RefNamed is set when claims are kept as git refs named after each
	// plan's slug (the git claims backend): a slug git refuses in a ref
	// name can then never be claimed (LeaseRefProblem).
	RefNamed bool
	// Refused is what the claims backend will not let be claimed for now,
	// slug to why: a completed plan that a rewrite of the integration
	// branch put back in a ready lane.
	Refused map[string]string
}

// LeaseFor returns the lease file naming rel, or nil.
func (s *Snapshot) LeaseFor(rel string) *Lease {
	for i := range s.Leases {
		if s.Leases[i].Rel == rel {
			return &s.Leases[i]
		}
	}
	return nil
}

// PlanAt returns the plan at rel, or nil.
func (s *Snapshot) PlanAt(rel string) *Plan {
	for i := range s.Plans {
		if s.Plans[i].Rel == rel {
			return &s.Plans[i]
		}
	}
	return nil
}

var priorityRank = map[string]int{"P1": 0, "P2": 1, "P3": 2}
var valueRank = map[string]int{"high": 0, "medium": 1, "low": 2}

// rankOr ranks a Priority or Value word; anything else ranks as the default
// (P2, medium), as the header parser would read it.
func rankOr(ranks map[string]int, w string) int {
	if r, ok := ranks[w]; ok {
		return r
	}
	return 1
}

func laneRank(l Lane) int {
	for i, x := range Lanes {
		if x == l {
			return i
		}
	}
	return len(Lanes)
}

// SortKey is a plan's place in anchor's ready order, computed once so that
// sorting thousands of plans compares integers, not words.
type SortKey struct {
	lane, priority, value int
	modTime               int64
	name, rel             string // name lower-cased
}

// KeyOf returns p's sort key.
func KeyOf(p *Plan) SortKey {
	return SortKey{
		lane: laneRank(p.Lane), priority: rankOr(priorityRank, p.Header.Priority), value: rankOr(valueRank, p.Header.Value),
		modTime: p.ModTime, name: strings.ToLower(p.Name), rel: p.Rel,
	}
}

// Compare orders keys: lane (bugs before features), Priority, Value, oldest
// mtime, lower-cased name, and the rel as a last tie-break.
func (a SortKey) Compare(b SortKey) int {
	switch {
	case a.lane != b.lane:
		return cmp.Compare(a.lane, b.lane)
	case a.priority != b.priority:
		return cmp.Compare(a.priority, b.priority)
	case a.value != b.value:
		return cmp.Compare(a.value, b.value)
	case a.modTime != b.modTime:
		return cmp.Compare(a.modTime, b.modTime)
	case a.name != b.name:
		return strings.Compare(a.name, b.name)
	}
	return strings.Compare(a.rel, b.rel)
}

// ComparePlans orders plans as anchor's ready sort key does, lanes first.
func ComparePlans(a, b *Plan) int { return KeyOf(a).Compare(KeyOf(b)) }
