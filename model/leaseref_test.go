package model

import (
	"strings"
	"testing"
)

// Names git refuses in refs/fleetwatch/leases/<slug> (checked against
// `git check-ref-format` by hand and in planfs/claims/gitclaims) and names it takes.
func TestLeaseRefProblem(t *testing.T) {
	bad := map[string]string{
		"a b": `' '`, "q?x": `'?'`, "tilde~1": `'~'`, "x..y": "..", "a^b": `'^'`, "a:b": `':'`, "a*b": `'*'`,
		"a[b": `'['`, `a\b`: `'\\'`, "a\x01": `'\x01'`, "x.lock": ".lock", ".x": "starts with .", "a@{b": "@{", "x.": "ends with .",
	}
	for slug, want := range bad {
		why := LeaseRefProblem(slug)
		if !strings.Contains(why, want) || !strings.Contains(why, "lease ref") {
			t.Errorf("LeaseRefProblem(%q) = %q, want it to name %s", slug, why, want)
		}
	}
	for _, slug := range []string{"ok", "a-b_c.d", "-x", "@", "x.locks", "UPPER"} {
		if why := LeaseRefProblem(slug); why != "" {
			t.Errorf("LeaseRefProblem(%q) = %q, want none", slug, why)
		}
	}
}

// Over git claims (RefNamed) an odd name is skipped with its reason by the
// pick and the board, and the plans after it move up; without it the same
// tree picks it; a plan the backend refuses is skipped with the backend's
// words.
func TestDecideSkipsRefRefusedAndRefused(t *testing.T) {
	plans := []Plan{
		mkPlan("bugs/a b.md", 1, "- **Priority:** P1"),
		mkPlan("bugs/x..y.md", 2, "- **Priority:** P1"),
		mkPlan("features/done-once.md", 3),
		mkPlan("features/good.md", 4),
	}
	local := &Snapshot{Plans: plans}
	if got := picks(local, midWorker, Options{Now: now}); len(got) != 4 {
		t.Fatalf("local claims pick %v, want all four", got)
	}
	s := &Snapshot{Plans: plans, RefNamed: true, Refused: map[string]string{"done-once": "completed before a rewind"}}
	if got := strings.Join(picks(s, midWorker, Options{Now: now}), " "); got != "features/good.md" {
		t.Errorf("git claims pick %q, want features/good.md alone", got)
	}
	rows := Decide(s, midWorker, Options{Now: now})
	for rel, want := range map[string]string{"bugs/a b.md": `"a b"`, "bugs/x..y.md": "..", "features/done-once.md": "completed before a rewind"} {
		if r := rowOf(rows, rel); r.Eligible || !strings.Contains(r.Problem, want) || !strings.HasPrefix(r.Reason, "cannot be claimed: ") {
			t.Errorf("%s: %+v, want skipped naming %s", rel, r, want)
		}
	}
	b := NewBoard(s, Options{Now: now})
	for _, row := range b.Rows {
		odd := row.Plan.Slug != "good"
		if got := row.Problem != "" && row.Tiers[1].Rank == 0; got != odd {
			t.Errorf("board row %s: problem %q rank %d", row.Plan.Rel, row.Problem, row.Tiers[1].Rank)
		}
	}
}
