package landing

import (
	"errors"
	"io"
	"slices"
	"time"

	"github.com/fleetwatch/fleetwatch/workers/forge"
)

// The types every face reads: candidates' states, checks, reviews and the
// queue's listing.

// State is a candidate's state in words, as `queue list` and the UI say it.
type State string

const (
	NeedsReview State = "needs review"
	// Reviewed is a peer's verdict waiting for a person; Approved a
	// person's approve waiting to be queued: never the same word.
	Reviewed State = "reviewed"
	Approved State = "approved"
	// NoChange is a branch not ahead of the integration branch: nothing
	// to review, check or land.
	NoChange State = "no change"
	Queued   State = "queued"
	Checking State = "checking"
	Ready    State = "ready"
	Conflict State = "conflict"
	Failed   State = "failed"
	Stale    State = "stale"
	Landed   State = "landed"
)

// Result is one check's outcome on one candidate tree; only Pass passes.
type Result string

const (
	Pass    Result = "pass"
	Fail    Result = "fail"
	Error   Result = "error" // exit 126/127, could not start, killed
	Timeout Result = "timeout"
	Missing Result = "missing" // configured, never ran on this tree
	Running Result = "running" // running now (a live runner holds it)
)

// CheckResult is one configured check on one candidate tree.
type CheckResult struct {
	Name   string        `json:"name"`
	Result Result        `json:"result"`
	Log    string        `json:"log"` // absolute path of its log, "" when it never ran
	Exit   int           `json:"exit"`
	Took   time.Duration `json:"took_ns"`
	Note   string        `json:"note,omitempty"` // "no match for expect_output \"ok\"", "killed after 10m"
	// Flaky is a pass on a retry of the same tree after a failure, whose
	// record and log are kept at FlakyLog's side (.retry.json, .retry.log).
	Flaky    bool   `json:"flaky,omitempty"`
	FlakyLog string `json:"flaky_log,omitempty"`
	// Since is when the run of a Running check began, as its runner
	// stamped its lock; zero when unknown.
	Since time.Time `json:"since,omitzero"`
}

// Review is one peer review of a commit (.plans/reviews/<slug>/<commit>.md).
type Review struct {
	Commit   string    `json:"commit"`
	Reviewer string    `json:"reviewer"` // agent id
	Endpoint string    `json:"endpoint,omitempty"`
	Base     string    `json:"base,omitempty"` // the merge base it was reviewed against
	Verdict  string    `json:"verdict"`        // ACCEPT, REVISE or ESCALATE
	At       time.Time `json:"at"`
	Path     string    `json:"path"` // absolute
	// Stale: the branch tip moved since, and landing it would not give the
	// tree landing Commit would (SameLanding).
	Stale bool `json:"stale"`
	// Self: the author's own endpoint reviewed it (--allow-self).
	Self bool `json:"self,omitempty"`
}

// Approval is a person's approve of a commit.
type Approval struct {
	Commit string    `json:"commit"`
	By     string    `json:"by"`
	At     time.Time `json:"at"`
	Stale  bool      `json:"stale"` // the tip moved since, to other content (SameLanding)
}

// Status is one candidate or queue entry as read now.
type Status struct {
	Slug     string `json:"slug"`
	Rel      string `json:"rel"` // the plan's rel in .plans/, "" when gone
	State    State  `json:"state"`
	Why      string `json:"why"`      // the state's reason in words: "ungated: no checks configured", "test failed"
	Position *int   `json:"position"` // 1-based place in the queue; nil when not queued
	Branch   string `json:"branch"`
	Commit   string `json:"commit"` // the branch tip
	Base     string `json:"base"`   // git merge-base with the integration branch, derived
	Ahead    int    `json:"ahead"`
	Behind   int    `json:"behind"`
	Author   string `json:"author"` // agent id whose run moved the plan to review-needed, "" unknown
	// ApprovedBy is the approver of the tip (or of a commit the tip is a
	// content-identical rebase of); "" when none.
	ApprovedBy    string        `json:"approved_by"`
	Approval      *Approval     `json:"approval"`
	Reviews       []Review      `json:"reviews"`   // newest first
	Ungated       bool          `json:"ungated"`   // no checks configured
	Candidate     string        `json:"candidate"` // the candidate commit, when built
	Tree          string        `json:"tree"`      // its tree id
	Checks        []CheckResult `json:"checks"`
	ConflictPaths []string      `json:"conflict_paths"`
	// ScopeViolations are the paths the change touches outside its plan's
	// `## Files in scope` (or under .plans/), sorted.
	ScopeViolations []string `json:"scope_violations"`
	// PR is the plan's pull request on the forge as last read (forge.go);
	// nil without a forge or before one is opened.
	PR *PR `json:"pr,omitempty"`
}

// Listing is every candidate and queue entry, queue entries first in queue
// order, then the rest by slug.
type Listing struct {
	Integration string   `json:"integration"`
	Tip         string   `json:"integration_tip"`
	Items       []Status `json:"items"`
	CheckNames  []string `json:"check_names"`
	// Notices are about the gate itself, one line each: the working tree
	// declaring other checks than the integration branch's committed
	// fleetwatch.yaml, or the integration branch moved outside the queue.
	Notices []string `json:"notices"`
	// MovedTo is the integration tip a move outside the queue left, for a
	// person to accept as their own (Accept); "" when there is none.
	MovedTo string `json:"moved_to,omitempty"`
	// Batch is the batch the next landing checks, with `queue: {batch: N}`.
	Batch *BatchView `json:"batch"`
}

// LandOptions say how to land the head.
type LandOptions struct {
	Ungated bool      // land with no checks configured
	Actor   string    // the person landing, for the event log
	Log     io.Writer // progress lines, one per step
	// forge is the project's forge when a batch lands through it (by the
	// queue's push); nil otherwise.
	forge forge.Forge
}

// Landing is what a landing did.
type Landing struct {
	Slug, Commit, From, To string // the frozen commit, the integration branch's old and new tips
	Integration            string // the branch it landed on
	Warnings               []string
	// Batch are the changes landed together, in order, when batching
	// (`queue: {batch: N}`); Failed the ones a bisection found failing,
	// left queued.
	Batch  []Landing
	Failed []string
}

// AllWarnings are the landing's warnings, then each batched change's, in
// order: a batch's are said on its changes.
func (l Landing) AllWarnings() []string {
	out := slices.Clone(l.Warnings)
	for _, one := range l.Batch {
		out = append(out, one.Warnings...)
	}
	return out
}

// ErrNotReady is Land's refusal when the head cannot land now (exit 1).
var ErrNotReady = errors.New("head not ready")

// PeerOptions choose the peer reviewer.
type PeerOptions struct {
	Endpoint string // "" = an endpoint of the author's tier or higher, not the author's
	AgentID  string // the reviewer's agent id; "" = derived, never the author
	Registry string // endpoints.yaml path; "" = the project's
	// AllowSelf lets the author's own endpoint review when it is the one
	// chosen; the review then says so. Without it Peer refuses.
	AllowSelf bool
	Log       io.Writer
	// Timeout bounds the reviewer's run; 0 = DefaultPeerTimeout.
	Timeout time.Duration
}
