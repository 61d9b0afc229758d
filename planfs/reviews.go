package planfs

import (
	"errors"
	"time"
)

// CONTRACT SKELETON (the review slice replaces the bodies): what planfs
// keeps for landing. Reviews and approvals live in .plans/reviews/<slug>/,
// which is not a lane: <commit>.md per peer review, approved.json for a
// person's approve.
var errReviewsNotBuilt = errors.New("not built yet")

// ReviewFile is one stored peer review.
type ReviewFile struct {
	Slug, Commit, Reviewer, Endpoint string
	Verdict                          string // ACCEPT, REVISE or ESCALATE
	At                               time.Time
	Path                             string // absolute
}

// WriteReview stores a peer review's text as .plans/reviews/<slug>/<commit>.md
// with r's fields in its header, and logs a `review` event.
func (t *Tree) WriteReview(r ReviewFile, text []byte) (string, error) {
	return "", errReviewsNotBuilt
}

// ReadReviews lists slug's stored peer reviews, newest first.
func (t *Tree) ReadReviews(slug string) ([]ReviewFile, error) { return nil, errReviewsNotBuilt }

// ApprovalFile is a person's approve of one commit of slug's branch.
type ApprovalFile struct {
	Slug, Commit, By string
	At               time.Time
}

// WriteApproval records a's approve of commit (an `approve` event too).
func (t *Tree) WriteApproval(slug, commit string, a Actor) (ApprovalFile, error) {
	return ApprovalFile{}, errReviewsNotBuilt
}

// ReadApproval is slug's standing approval, nil when none.
func (t *Tree) ReadApproval(slug string) (*ApprovalFile, error) { return nil, errReviewsNotBuilt }

// VoidApproval drops slug's approval (send-back, needs-work), logging why.
func (t *Tree) VoidApproval(slug string, a Actor) error { return errReviewsNotBuilt }

// Author is the agent id whose run moved slug to review-needed/, from the
// event log; "" when unknown.
func (t *Tree) Author(slug string) string { return "" }

// SendBack moves a review-needed plan back to the ready lane it was
// claimed from, with note appended under `## Review notes`, and voids its
// approval.
func (t *Tree) SendBack(rel, note string, a Actor) (string, error) { return "", errReviewsNotBuilt }

// Defer parks a review-needed plan in blocked/ with note under
// `## Review notes`.
func (t *Tree) Defer(rel, note string, a Actor) (string, error) { return "", errReviewsNotBuilt }

// Land moves a review-needed plan to completed/ once its change landed.
func (t *Tree) Land(rel string, a Actor) (string, error) { return "", errReviewsNotBuilt }
