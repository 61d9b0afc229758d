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

// ComparePlans orders plans as anchor's ready sort key does, lanes first:
// bugs before features, then Priority, Value, oldest mtime, lower-cased name.
func ComparePlans(a, b *Plan) int {
	return cmp.Or(
		cmp.Compare(laneRank(a.Lane), laneRank(b.Lane)),
		cmp.Compare(rankOr(priorityRank, a.Header.Priority), rankOr(priorityRank, b.Header.Priority)),
		cmp.Compare(rankOr(valueRank, a.Header.Value), rankOr(valueRank, b.Header.Value)),
		cmp.Compare(a.ModTime, b.ModTime),
		strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)),
		strings.Compare(a.Rel, b.Rel),
	)
}
