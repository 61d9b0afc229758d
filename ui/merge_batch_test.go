package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/ui/mergekeys"
	"github.com/fleetwatch/fleetwatch/workers/landing"
)

// The batch line names who rides together, its checks with a flaky pass
// apart from a pass, and the bisection of a failed batch.
func TestMergeBatchLine(t *testing.T) {
	t.Parallel()
	b := &landing.BatchView{
		Slugs:  []string{"a", "b", "c"},
		Checks: []landing.CheckResult{{Name: "vet", Result: landing.Pass}, {Name: "test", Result: landing.Pass, Flaky: true}},
	}
	if got, want := mergekeys.BatchLine(b), "batch of 3: a, b, c · ✓≈"; got != want {
		t.Errorf("batchLine = %q, want %q", got, want)
	}
	b.Checks[1] = landing.CheckResult{Name: "test", Result: landing.Fail}
	b.Retried = true
	b.Bisection = &landing.Bisection{Passing: 1, Failing: 2, Culprit: "b"}
	if got, want := mergekeys.BatchLine(b), "batch of 3: a, b, c · ✓✗ · retried · bisecting: 1 pass, 2 fail, culprit b"; got != want {
		t.Errorf("batchLine = %q, want %q", got, want)
	}
}

// With batches, m names the changes that ride together and lands them
// even when the entry ahead failed; the pane shows the batch line and a
// flaky pass apart from a pass.
func TestMergeLandBatch(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 100, 24, func(p *project) landing.Listing {
		l := sampleListing(p)
		for i := range l.Items {
			if l.Items[i].Slug == "theme-engine" {
				l.Items[i].State, l.Items[i].Why = landing.Failed, "test failed"
				l.Items[i].Checks[0].Result = landing.Fail
			}
			if l.Items[i].Slug == "export-pdf" {
				l.Items[i].Checks[0].Flaky = true
			}
		}
		l.Batch = &landing.BatchView{Slugs: []string{"export-pdf"}, Candidate: "ba7c4ba7c4", Tree: "7ee5",
			Checks: []landing.CheckResult{{Name: "test", Result: landing.Pass, Flaky: true}, {Name: "lint", Result: landing.Pass}}}
		return l
	})
	if v := h.view(); !strings.Contains(v, "batch of 1: export-pdf · ≈✓") || !strings.Contains(v, "≈ flaky") {
		t.Errorf("the pane lacks the batch line or the flaky legend:\n%s", v)
	}
	h.press("m")
	d := h.m.dialogShown()
	if d == nil || d.Do == nil {
		t.Fatal("m opened no landing dialog")
	}
	body := d.Title + "\n" + strings.Join(d.Body, "\n")
	for _, w := range []string{"Land a batch of 1", "export-pdf", "candidate ba7c4ba", "retried once, then bisected"} {
		if !strings.Contains(body, w) {
			t.Errorf("the batch dialog lacks %q:\n%s", w, body)
		}
	}
}

// A batch being checked showed its rows "queued" and "not checked on this
// tree yet": each row says it is checked in the batch, which, and since
// when.
func TestMergeRowsOfABatchBeingChecked(t *testing.T) {
	t.Parallel()
	since := time.Date(2025, 3, 14, 12, 3, 4, 0, time.Local)
	h := mergeHarness(t, 160, 30, func(p *project) landing.Listing {
		l := sampleListing(p)
		for i := range l.Items {
			if s := &l.Items[i]; s.Slug == "theme-engine" || s.Slug == "export-pdf" {
				s.State, s.Why = landing.Queued, "not checked on this tree yet: test, lint"
				s.Checks = []landing.CheckResult{{Name: "test", Result: landing.Missing}, {Name: "lint", Result: landing.Missing}}
			}
		}
		l.Batch = &landing.BatchView{Slugs: []string{"theme-engine", "export-pdf"}, Candidate: "ba7c4ba7c4", Tree: "7ee5",
			Checks: []landing.CheckResult{{Name: "test", Result: landing.Running, Since: since}, {Name: "lint", Result: landing.Missing}}}
		return l
	})
	v := h.view()
	for slug, other := range map[string]string{"theme-engine": "export-pdf", "export-pdf": "theme-engine"} {
		r := lineWith(v, " "+slug+"  ")
		if !strings.Contains(r, "checking in a batch with "+other+" since 12:03:04: test running") {
			t.Errorf("the row of %s does not say its batch is being checked: %q", slug, r)
		}
		if strings.Contains(r, "not checked on this tree yet") {
			t.Errorf("the row of %s still says it is not checked: %q", slug, r)
		}
	}
}
