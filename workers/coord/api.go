package coord

import (
	"errors"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
)

// RunDir is the shared run directory, relative to the project: proposals,
// their records and decisions live under it.
const RunDir = "var/fleet/run"

// Record is what the driver writes beside proposal N when the plan turn
// exits (var/fleet/run/proposals/<slug>/<n>.json): who wrote the text, in
// which run, and its sha256. An approval applies only to text that still
// matches it.
type Record struct {
	Slug    string    `json:"slug"`
	N       int       `json:"n"`
	Plan    string    `json:"plan"` // the plan's rel when it was written
	AgentID string    `json:"agent_id"`
	RunID   string    `json:"run_id"`
	SHA256  string    `json:"sha256"`
	At      time.Time `json:"at"`
}

// Decision is the coordinator's answer to proposal N
// (var/fleet/run/proposals/<slug>/decision.json).
type Decision struct {
	Slug    string    `json:"slug"`
	N       int       `json:"n"`
	Verdict string    `json:"verdict"` // approved or rejected
	By      string    `json:"by"`
	At      time.Time `json:"at"`
	// SHA256 is of the approved text (the proposal, or the approver's
	// edit of it); Scope its Files in scope.
	SHA256 string   `json:"sha256,omitempty"`
	Scope  []string `json:"scope,omitempty"`
	// Text is the approved text's path (absolute): what FLEET_APPROVED_PLAN
	// names. Edited says the approver changed it, and it is theirs.
	Text   string `json:"text,omitempty"`
	Edited bool   `json:"edited,omitempty"`
	// Note is a rejection's reason; Feedback the file it is in, for
	// FLEET_FEEDBACK.
	Note     string `json:"note,omitempty"`
	Feedback string `json:"feedback,omitempty"`
	// Resumed is set once a run took the decision up.
	Resumed bool `json:"resumed,omitempty"`
}

// Verdicts.
const (
	Approved = "approved"
	Rejected = "rejected"
)

// Entry is one plan in the inbox: a proposal waiting for the coordinator,
// or a decided one waiting for its agent to take it up.
type Entry struct {
	Slug, Rel, Title string
	Lease            *model.Lease
	N                int
	Proposal         string // the proposal's path (absolute)
	Record           *Record
	Decision         *Decision // nil while it waits for the coordinator
	Scope            model.Scope
	ScopeFound       bool
	// Problem says why it cannot be approved as it is (no record, text
	// changed since the agent wrote it); "" when it can.
	Problem string
}

// Waiting reports whether e waits for the coordinator (not yet decided).
func (e Entry) Waiting() bool { return e.Decision == nil }

// Approver is who decides: an agent id for the event log, and whether the
// role may act at all (an SSH viewer may not).
type Approver struct {
	AgentID  string
	ReadOnly bool
}

// ErrReadOnly refuses a decision from a read-only role.
var ErrReadOnly = errors.New("read-only: a viewer can neither approve nor reject")

// ErrNotWaiting means the plan has no proposal waiting for a decision.
var ErrNotWaiting = errors.New("no proposal waits for approval")
