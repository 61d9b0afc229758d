package model

import (
	"strings"
	"testing"
)

func TestSameBranch(t *testing.T) {
	same := [][2]string{{"a+b", "a-b"}, {"a b", "a+b"}, {"A+b", "a-b"}, {"x~1", "x 1"}}
	differ := [][2]string{{"a-b", "a-b"}, {"a-b", "A-B"}, {"a-b", "a_b"}, {"a-b", "ab"}}
	for _, c := range same {
		if !SameBranch(c[0], c[1]) {
			t.Errorf("SameBranch(%q, %q) = false, want true", c[0], c[1])
		}
	}
	for _, c := range differ {
		if SameBranch(c[0], c[1]) {
			t.Errorf("SameBranch(%q, %q) = true, want false", c[0], c[1])
		}
	}
}

// Plans a+b and a-b would both work on feature/a-b: neither is picked, each
// says which plan it shares with, whatever the lanes, and the plan after
// them is taken. A completed plan's branch is still its own.
func TestDecideRefusesPlansSharingABranch(t *testing.T) {
	s := &Snapshot{Plans: []Plan{
		mkPlan("bugs/a+b.md", 1, "- **Priority:** P1"),
		mkPlan("features/a-b.md", 2, "- **Priority:** P1"),
		mkPlan("completed/c d.md", 3),
		mkPlan("features/c+d.md", 4, "- **Priority:** P1"),
		mkPlan("features/next.md", 5),
		mkPlan("features/NEXT.local.md", 6), // a duplicate slug, not a sharer
	}}
	for _, need := range []bool{false, true} {
		rows := Decide(s, midWorker, Options{Now: now, NeedBranch: need})
		for rel, other := range map[string]string{"bugs/a+b.md": "features/a-b.md", "features/a-b.md": "bugs/a+b.md", "features/c+d.md": "completed/c d.md"} {
			r := rowOf(rows, rel)
			want := "its branch " + FeatureBranch(r.Plan.Slug) + " is also " + other + "'s"
			if r.Eligible || !strings.Contains(r.Reason, "cannot be claimed: "+want) || !strings.Contains(r.Problem, want) {
				t.Errorf("needBranch=%v %s: %+v, want %q", need, rel, r, want)
			}
		}
		if r := rowOf(rows, "features/next.md"); !r.Eligible || r.Rank != 1 || r.Problem != "" {
			t.Errorf("needBranch=%v next: %+v", need, r)
		}
	}
	if sh := BranchSharers(s); len(sh) != 4 {
		t.Errorf("BranchSharers: %v, want a+b, a-b, c d, c+d", sh)
	}
}

// A plan the worker's own setup refuses by its name (Options.Refuse) is
// skipped with that reason; the next plan ranks first.
func TestDecideSkipsPlansTheWorkerRefuses(t *testing.T) {
	s := &Snapshot{Plans: []Plan{mkPlan("bugs/bad$'name.md", 1, "- **Priority:** P1"), mkPlan("features/next.md", 2)}}
	refuse := func(p *Plan) string {
		if strings.Contains(p.Slug, "$") {
			return "the template refuses its name"
		}
		return ""
	}
	rows := Decide(s, midWorker, Options{Now: now, Refuse: refuse})
	if r := rowOf(rows, "bugs/bad$'name.md"); r.Eligible || r.Reason != "cannot be claimed: the template refuses its name" {
		t.Errorf("refused row: %+v", r)
	}
	if r := rowOf(rows, "features/next.md"); r.Rank != 1 {
		t.Errorf("next: %+v", r)
	}
}
