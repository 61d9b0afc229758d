package landing

import (
	"fmt"
	"strings"
)

// facts are what a read found about one candidate; decide turns them into
// its state. Nothing here is stored: every field is derived on each read.
type facts struct {
	Landed bool // refs/fleetwatch/landed/<slug> is pinned and the tip is in integration
	// Unfinished says what is left of a landing killed after its swap,
	// "" when there is none.
	Unfinished string
	NoBranch   bool     // feature/<slug> is missing
	NotAhead   bool     // the branch has no commit the integration branch lacks
	Conflicts  []string // merging the tip into integration conflicts here
	Approval   *Approval
	Reviews    []Review // newest first
	Queued     bool
	Ungated    bool
	Checks     []CheckResult
}

// ungatedWhy is the words for a queued change with no checks configured.
const ungatedWhy = "ungated: no checks configured — land with --ungated"

// decide is a candidate's state and its reason, by precedence: landed,
// conflict, stale approval, needs review / reviewed (not approved, or
// approved but not queued), then for a queued entry its checks on this
// exact tree: a settled failure beats a check still running, which beats
// one never run (queued); ready only when every check passed.
func decide(f facts) (State, string) {
	switch {
	case f.Unfinished != "":
		return Landed, f.Unfinished
	case f.Landed:
		return Landed, ""
	case f.NoBranch:
		return NeedsReview, "no branch to land"
	case f.NotAhead:
		return NoChange, "not ahead of the integration branch: no commit to review or land"
	case len(f.Conflicts) > 0:
		return Conflict, "conflicts with integration in " + strings.Join(f.Conflicts, ", ")
	case f.Approval != nil && f.Approval.Stale:
		return Stale, fmt.Sprintf("the branch moved after %s approved %s", f.Approval.By, short(f.Approval.Commit))
	case f.Approval == nil:
		return unapproved(f.Reviews)
	case !f.Queued:
		return Approved, fmt.Sprintf("approved by %s; queue add to queue it", f.Approval.By)
	case f.Ungated:
		return Queued, ungatedWhy
	}
	return byChecks(f.Checks)
}

// unapproved is the state of a change with no approval, by its reviews
// (newest first): the newest fresh one, else a stale one, else none.
func unapproved(reviews []Review) (State, string) {
	for _, r := range reviews {
		if !r.Stale {
			return Reviewed, fmt.Sprintf("%s by %s at %s; approve to land", r.Verdict, r.Reviewer, short(r.Commit))
		}
	}
	if len(reviews) > 0 {
		return NeedsReview, fmt.Sprintf("the review of %s is stale: the branch moved", short(reviews[0].Commit))
	}
	return NeedsReview, ""
}

// byChecks is a queued change's state by its checks on this exact tree: a
// settled failure beats a check still running, which beats one never run.
func byChecks(checks []CheckResult) (State, string) {
	var running, missing []string
	for _, c := range checks {
		switch c.Result {
		case Pass:
		case Running:
			running = append(running, c.Name)
		case Missing, "":
			missing = append(missing, c.Name)
		default:
			return Failed, failedWhy(c)
		}
	}
	switch {
	case len(running) > 0:
		return Checking, strings.Join(running, ", ") + " running"
	case len(missing) > 0:
		return Queued, "not checked on this tree yet: " + strings.Join(missing, ", ")
	}
	return Ready, ""
}

// failedWhy names a settled failure, with its note and log when known.
func failedWhy(c CheckResult) string {
	why := fmt.Sprintf("%s %s", c.Name, failedWord(c.Result))
	if c.Note != "" {
		why += " (" + c.Note + ")"
	}
	if c.Log != "" {
		why += "; log " + c.Log
	}
	return why
}

func failedWord(r Result) string {
	switch r {
	case Fail:
		return "failed"
	case Error:
		return "could not run"
	case Timeout:
		return "timed out"
	}
	return string(r)
}

// allPass reports whether every configured check passed; none is not a pass.
func allPass(checks []CheckResult) bool {
	for _, c := range checks {
		if c.Result != Pass {
			return false
		}
	}
	return len(checks) > 0
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
