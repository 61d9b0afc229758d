package landing

import (
	"strings"
	"testing"
)

func TestDecide(t *testing.T) {
	ok := &Approval{Commit: "abc", By: "operator-ann"}
	stale := &Approval{Commit: "abc", By: "operator-ann", Stale: true}
	pass := CheckResult{Name: "test", Result: Pass}
	lintMissing := CheckResult{Name: "lint", Result: Missing}
	lintRunning := CheckResult{Name: "lint", Result: Running}
	testFail := CheckResult{Name: "test", Result: Fail, Log: "/l/test.log"}
	for _, c := range []struct {
		name  string
		f     facts
		state State
		why   string // a part of Why
	}{
		{"landed beats everything", facts{Landed: true, Conflicts: []string{"a"}}, Landed, ""},
		{"conflict beats stale", facts{Conflicts: []string{"a.go", "b.go"}, Approval: stale}, Conflict, "a.go, b.go"},
		{"stale approval", facts{Approval: stale, Queued: true, Checks: []CheckResult{pass}}, Stale, "moved"},
		{"no review", facts{}, NeedsReview, ""},
		{"stale review only", facts{Reviews: []Review{{Commit: "c", Stale: true}}}, NeedsReview, "stale"},
		{"peer reviewed", facts{Reviews: []Review{{Commit: "c", Verdict: "ACCEPT", Reviewer: "w2"}}}, Reviewed, "ACCEPT by w2"},
		{"approved, not queued", facts{Approval: ok, Checks: []CheckResult{pass}}, Approved, "queue add"},
		{"peer REVISE and approved are two words", facts{Approval: ok, Reviews: []Review{{Commit: "c", Verdict: "REVISE", Reviewer: "w2"}}}, Approved, "approved by"},
		{"ungated", facts{Approval: ok, Queued: true, Ungated: true}, Queued, "--ungated"},
		{"checks missing", facts{Approval: ok, Queued: true, Checks: []CheckResult{pass, lintMissing}}, Queued, "lint"},
		{"checking", facts{Approval: ok, Queued: true, Checks: []CheckResult{pass, lintRunning}}, Checking, "lint running"},
		{"failed beats running", facts{Approval: ok, Queued: true, Checks: []CheckResult{testFail, lintRunning}}, Failed, "test failed; log /l/test.log"},
		{"timeout", facts{Approval: ok, Queued: true, Checks: []CheckResult{{Name: "slow", Result: Timeout}}}, Failed, "slow timed out"},
		{"ready", facts{Approval: ok, Queued: true, Checks: []CheckResult{pass}}, Ready, ""},
		{"no branch", facts{NoBranch: true, Approval: ok}, NeedsReview, "no branch"},
		{"not ahead", facts{NotAhead: true, Approval: ok, Checks: []CheckResult{pass}}, NoChange, "not ahead of the integration branch"},
	} {
		state, why := decide(c.f)
		if state != c.state || !strings.Contains(why, c.why) {
			t.Errorf("%s: got %q (%q), want %q with %q", c.name, state, why, c.state, c.why)
		}
	}
}
