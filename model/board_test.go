package model

import (
	"math/rand/v2"
	"testing"
)

// The board's per-tier ranks are exactly what Decide gives a bare worker of
// that tier, on a random tree with leases, deps and every lane.
func TestBoardMatchesDecide(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	lanes := []string{"drafts", "bugs", "features", "in-progress", "blocked", "completed"}
	prefs := []string{"", "small", "mid", "reasoner", "frontier", "small, mid", "reasoner, frontier", "some-model"}
	var s Snapshot
	for i := range 300 {
		rel := lanes[rng.IntN(len(lanes))] + "/p" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ".md"
		lines := []string{"- **Preferred models:** " + prefs[rng.IntN(len(prefs))]}
		if rng.IntN(4) == 0 {
			lines = append(lines, "- **Depends on:** p"+string(rune('a'+rng.IntN(26)))+"a")
		}
		if rng.IntN(10) == 0 {
			lines = append(lines, "- **Assignee:** alice")
		}
		s.Plans = append(s.Plans, mkPlan(rel, int64(rng.IntN(50)), lines...))
		if rng.IntN(8) == 0 {
			s.Leases = append(s.Leases, Lease{Rel: rel, AgentID: "x", ExpiresAt: now + float64(rng.IntN(200)-100)})
		}
	}
	opt := Options{Now: now}
	b := NewBoard(&s, opt)
	if len(b.Rows) != len(s.Plans) {
		t.Fatalf("board has %d rows for %d plans", len(b.Rows), len(s.Plans))
	}
	total := 0
	for _, n := range b.Counts {
		total += n
	}
	if total != len(s.Plans) {
		t.Fatalf("counts sum to %d, want %d", total, len(s.Plans))
	}
	for k, tier := range Tiers {
		rows := Decide(&s, Worker{Tier: tier}, opt)
		for i := range rows {
			cell := b.Rows[i].Tiers[k]
			if b.Rows[i].Plan != rows[i].Plan || cell.Rank != rows[i].Rank || cell.Fit != rows[i].Fit || cell.Reason != rows[i].Reason {
				t.Fatalf("%s row %d: board %s %+v, decide %s rank %d fit %s reason %q", tier, i,
					b.Rows[i].Plan.Rel, cell, rows[i].Plan.Rel, rows[i].Rank, rows[i].Fit, rows[i].Reason)
			}
		}
	}
	for _, l := range Lanes {
		for _, r := range b.Lane(l) {
			if r.Plan.Lane != l {
				t.Fatalf("Lane(%s) returned %s", l, r.Plan.Rel)
			}
		}
		if len(b.Lane(l)) != b.Counts[l] {
			t.Fatalf("Lane(%s) has %d rows, count says %d", l, len(b.Lane(l)), b.Counts[l])
		}
	}
}

func TestBoardPerson(t *testing.T) {
	s := Snapshot{Plans: []Plan{
		mkPlan("bugs/hers.md", 1, "- **Assignee:** alice (on call)"),
		mkPlan("bugs/any.md", 2, "- **Assignee:** agent"),
	}}
	b := NewBoard(&s, Options{Now: now})
	got := map[string]string{}
	for i := range b.Rows {
		got[b.Rows[i].Plan.Slug] = b.Rows[i].Person()
	}
	if got["hers"] != "alice" || got["any"] != "" {
		t.Fatalf("persons: %v", got)
	}
}
