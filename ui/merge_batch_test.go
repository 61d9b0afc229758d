package ui

import (
	"testing"

	"fleetwatch/workers/landing"
)

// The batch line names who rides together, its checks with a flaky pass
// apart from a pass, and the bisection of a failed batch.
func TestMergeBatchLine(t *testing.T) {
	b := &landing.BatchView{
		Slugs:  []string{"a", "b", "c"},
		Checks: []landing.CheckResult{{Name: "vet", Result: landing.Pass}, {Name: "test", Result: landing.Pass, Flaky: true}},
	}
	if got, want := batchLine(b), "batch of 3: a, b, c · ✓≈"; got != want {
		t.Errorf("batchLine = %q, want %q", got, want)
	}
	b.Checks[1] = landing.CheckResult{Name: "test", Result: landing.Fail}
	b.Retried = true
	b.Bisection = &landing.Bisection{Passing: 1, Failing: 2, Culprit: "b"}
	if got, want := batchLine(b), "batch of 3: a, b, c · ✓✗ · retried · bisecting: 1 pass, 2 fail, culprit b"; got != want {
		t.Errorf("batchLine = %q, want %q", got, want)
	}
}
