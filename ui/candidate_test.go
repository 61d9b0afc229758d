package ui

import (
	"strings"
	"testing"

	"fleetwatch/landing"
)

// candidates is a listing of theme-engine, queued, and csv-import, the
// sample tree's plan in review-needed/, as set (theme-engine queues after
// it when it is queued).
func candidates(csv landing.Status) landing.Listing {
	csv.Slug, csv.Rel, csv.Branch, csv.Commit = "csv-import", "review-needed/csv-import.md", "feature/csv-import", "c5c5c5c5c5c5"
	if csv.Ahead == 0 && csv.State != landing.NoChange {
		csv.Ahead = 1
	}
	theme := at(1)
	if csv.Position != nil {
		theme = at(*csv.Position + 1)
	}
	return landing.Listing{
		Integration: "dev", Tip: "1a2b3c4d5e6f", CheckNames: []string{"test"},
		Items: []landing.Status{
			{Slug: "theme-engine", Rel: "review-needed/theme-engine.md", State: landing.Ready, Position: theme,
				Branch: "feature/theme-engine", Commit: "abcdef0123456", Ahead: 3, ApprovedBy: "alice",
				Checks: []landing.CheckResult{{Name: "test", Result: landing.Pass}}},
			csv,
		},
	}
}

// In the Plans pane, A, X, + and m act on the selected plan's own
// candidate, naming it, or say why not; never on the Merge pane's row.
func TestMergeKeysInPlansActOnTheSelectedPlan(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	opt := p.options()
	opt.Self = "/usr/local/bin/fleetwatch" // never run: only dialogs open
	h := newHarnessWith(t, p, opt, 120, 36)
	h.send(mergeMsg{listing: candidates(landing.Status{State: landing.NeedsReview})})
	h.selectPlan("review-needed/csv-import.md")
	for _, c := range []struct{ key, title string }{{"A", "Approve csv-import @ c5c5c5c"}, {"X", "Needs work: csv-import"}} {
		h.press(c.key)
		if d := h.m.dialogShown(); d == nil || d.title != c.title {
			t.Fatalf("%s in Plans on csv-import: want the dialog %q:\n%s", c.key, c.title, h.view())
		}
		h.press("esc")
	}
	for key, want := range map[string]string{
		"+": "✗ add: only approved candidates join the queue; approve csv-import first (A)",
		"m": "✗ land: csv-import is not queued; only the queue's head lands",
	} {
		h.press(key)
		if f := h.footer(); !strings.Contains(f, want) || h.dialogOpen() {
			t.Errorf("%s in Plans on csv-import: %q, want %q", key, f, want)
		}
	}
	// Approved and at the queue's head, m lands it, and + is said to be done.
	h.send(mergeMsg{listing: candidates(landing.Status{State: landing.Ready, Position: at(1), ApprovedBy: "op"})})
	h.press("+")
	if f := h.footer(); !strings.Contains(f, "csv-import is in the queue already, at 1") {
		t.Errorf("+ on a queued candidate: %q", f)
	}
	h.press("m")
	if d := h.m.dialogShown(); d == nil || d.title != "Land csv-import @ c5c5c5c" {
		t.Fatalf("m on the plan whose candidate heads the queue:\n%s", h.view())
	}
	h.press("esc")
	// A plan that is no candidate: each key says so, naming the plan.
	h.selectPlan("bugs/crash-on-save.md")
	for _, key := range []string{"A", "X", "+", "m"} {
		h.press(key)
		if f := h.footer(); !strings.Contains(f, "crash-on-save is not a merge candidate") || h.dialogOpen() {
			t.Errorf("%s on a plan with no candidate: %q", key, f)
		}
	}
}

// A branch not ahead of the integration branch shows no check glyphs and
// no approve; its row says why.
func TestMergeNoChangeRow(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 120, 36, func(*project) landing.Listing {
		return candidates(landing.Status{State: landing.NoChange, Why: "not ahead of the integration branch: no commit to review or land"})
	})
	h.selectSlug("csv-import")
	var row string
	for _, l := range strings.Split(h.view(), "\n") {
		if strings.Contains(l, "csv-import") {
			row = l
		}
	}
	if !strings.Contains(row, "no change") || !strings.Contains(row, "not ahead of the integration branch") || strings.ContainsAny(row, "✓✗·◷") {
		t.Errorf("the row of a branch not ahead: %q", row)
	}
	if h.m.keys.Merge.Approve.Enabled() || h.m.keys.Merge.Add.Enabled() {
		t.Error("approve or add offered on a branch with no change")
	}
	h.press("A")
	if f := h.footer(); !strings.Contains(f, "nothing to approve") || h.dialogOpen() {
		t.Errorf("A on a branch with no change: %q", f)
	}
}

// A change touching paths outside its scope says so on its row and in its
// detail; approving it asks again, naming the paths.
func TestMergeApproveOutOfScopeAsksAgain(t *testing.T) {
	t.Parallel()
	paths := []string{".plans/completed/csv-import.md", "secrets/key.pem"}
	h := mergeHarness(t, 160, 40, func(*project) landing.Listing {
		return candidates(landing.Status{State: landing.NeedsReview, ScopeViolations: paths})
	})
	h.selectSlug("csv-import")
	if v := h.view(); !strings.Contains(v, "⚠ 2 paths out of scope") {
		t.Errorf("the row does not show the violation:\n%s", v)
	}
	h.press("enter")
	if v := h.view(); !strings.Contains(v, "Out of scope: 2 paths") || !strings.Contains(v, "secrets/key.pem") {
		t.Errorf("the detail does not name the paths:\n%s", v)
	}
	h.press("esc", "A")
	d := h.m.dialogShown()
	if d == nil || !strings.Contains(strings.Join(d.body, "\n"), "outside its plan's scope: .plans/completed/csv-import.md, secrets/key.pem") {
		t.Fatalf("the approve dialog does not name the violations:\n%s", h.view())
	}
	h.press("enter")
	d = h.m.dialogShown()
	if d == nil || d.title != "Out of scope: csv-import" || d.verb != "approve anyway" ||
		!strings.Contains(strings.Join(d.body, "\n"), "  secrets/key.pem") {
		t.Fatalf("approve did not ask again:\n%s", h.view())
	}
	h.press("esc")
	if h.dialogOpen() || strings.Contains(h.footer(), "approved") {
		t.Errorf("esc on the second question approved, or left it open: %q", h.footer())
	}
}

// An approved change waiting to be queued is "approved", not a peer's
// "reviewed"; its reason names the key that queues it, to an operator.
func TestMergeApprovedRowNamesTheKey(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 160, 40, func(*project) landing.Listing {
		return candidates(landing.Status{State: landing.Approved, ApprovedBy: "op", Why: "approved by op; queue add to queue it",
			Reviews: []landing.Review{{Commit: "c5c5c5c5c5c5", Reviewer: "rev-big", Verdict: "REVISE"}}})
	})
	row := func() string {
		for _, l := range strings.Split(h.view(), "\n") {
			if strings.Contains(l, "csv-import") {
				return l
			}
		}
		return ""
	}
	if r := row(); !strings.Contains(r, " approved ") || !strings.Contains(r, "approved by op; + queues it") || strings.Contains(r, "queue add") {
		t.Errorf("the approved row: %q", r)
	}
	h.m.opt.ReadOnly = true
	h.m.merge.rebuild(&h.m)
	if r := row(); !strings.Contains(r, "approved by op; not queued yet") {
		t.Errorf("a viewer's approved row: %q", r)
	}
}
