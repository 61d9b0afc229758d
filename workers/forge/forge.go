// Package forge talks to the forge whose pull requests carry a project's
// finished work: Gitea (and Forgejo), GitHub and GitLab, each through its
// own well-kept client. It owns the API calls and the token; what a pull
// request means for a plan (when one is opened, what counts as an approval,
// who lands) is the landing queue's. Every answer is read as hostile: the
// forge's words never pick a commit, they only confirm or refuse one.
package forge

import (
	"context"
	"errors"
	"time"
)

// PR is one pull request (a merge request on GitLab) as the forge says.
type PR struct {
	Number  int
	State   string // open, closed or merged
	Title   string
	Head    string // the branch it merges
	HeadSHA string // the commit at Head's tip, as the forge sees it
	Base    string
	URL     string // its web page
	// MergeCommit is the commit the merge made, once merged.
	MergeCommit string
	// Checks is the combined status of HeadSHA: success, pending,
	// failure or "" when none was posted (filled by List and Get).
	Checks  string
	Updated time.Time
}

// The states a PR is in.
const (
	StateOpen   = "open"
	StateClosed = "closed"
	StateMerged = "merged"
)

// NewPR is what EnsurePR opens or brings up to date.
type NewPR struct {
	Head, Base  string
	Title, Body string
}

// Status is one commit status (a check's outcome) on one commit.
type Status struct {
	Context     string // fleetwatch/<check>
	State       string // pending, success, failure or error
	Description string // at most 140 characters are kept
	TargetURL   string
}

// The states of a Status.
const (
	StatusPending = "pending"
	StatusSuccess = "success"
	StatusFailure = "failure"
	StatusError   = "error"
)

// ReviewIn is a review fleetwatch posts: a peer's verdict, or a `needs
// work` note. It never approves: an agent's verdict is not a person's.
type ReviewIn struct {
	Commit string // the commit reviewed
	Body   string
	// RequestChanges marks it as asking for changes (where the forge
	// lets the token's user do so); else it is a comment.
	RequestChanges bool
}

// Review is a review on the forge, by anyone.
type Review struct {
	ID     int64
	Author string
	// State is approved, changes_requested, commented or dismissed.
	State  string
	Commit string // the commit it was given on
	Body   string
	At     time.Time
}

// The states of a Review.
const (
	ReviewApproved         = "approved"
	ReviewChangesRequested = "changes_requested"
	ReviewCommented        = "commented"
	ReviewDismissed        = "dismissed"
)

// Comment is a comment on a PR or on a line of its change, by anyone.
type Comment struct {
	ID     int64     `json:"id"`
	Author string    `json:"author"`
	Body   string    `json:"body"`
	Path   string    `json:"path,omitempty"` // "" for a comment on the PR as a whole
	Line   int       `json:"line,omitempty"`
	At     time.Time `json:"at"`
}

// Protection is what the base branch asks of a change.
type Protection struct {
	Protected bool
	// PushAllowed: the token's user may push to the branch directly.
	PushAllowed bool
	// Approvals is how many approvals a merge needs.
	Approvals int
	// Checks are the status contexts a merge needs.
	Checks []string
	// MergeQueue: merges go through the forge's merge queue or train.
	MergeQueue bool
}

// User is the token's user and what it may do.
type User struct {
	Login string
	// Scopes are the token's scopes where the forge tells them (GitHub's
	// classic tokens, GitLab's personal tokens), nil where it does not.
	Scopes []string
}

// Errors a caller acts on.
var (
	// ErrHeadMoved: the PR's head is not the commit the merge was pinned to.
	ErrHeadMoved = errors.New("the pull request's head moved")
	// ErrNotFound: no such PR, commit or repository.
	ErrNotFound = errors.New("not found on the forge")
	// ErrRefused: the forge refused (protection, conflicts, permissions).
	ErrRefused = errors.New("the forge refused")
)

// Forge is one project's repository on one forge. Every method is safe to
// call from several goroutines and bounded by its context.
type Forge interface {
	// Kind is gitea, github or gitlab.
	Kind() string
	// Web is the repository's web page.
	Web() string
	// Remote is the repository's git URL (https) for pushes; the token
	// travels in GitEnv, never in the URL.
	Remote() string
	// GitEnv are the environment entries that give one git command the
	// token for Remote (GIT_CONFIG_COUNT…): only the driver's own git gets
	// them, never an agent's.
	GitEnv() []string

	Me(ctx context.Context) (User, error)
	// Writer reports whether login may push to the repository: only such
	// a person's approval on the forge counts as an approval.
	Writer(ctx context.Context, login string) (bool, error)
	Protection(ctx context.Context, branch string) (Protection, error)

	// Find is the newest PR from head into base in any state; false when
	// there is none.
	Find(ctx context.Context, head, base string) (PR, bool, error)
	Get(ctx context.Context, number int) (PR, error)
	// List is every open PR into base, all pages.
	List(ctx context.Context, base string) ([]PR, error)
	// Ensure opens the PR of p.Head into p.Base, or brings an open one's
	// title and body up to date.
	Ensure(ctx context.Context, p NewPR) (PR, error)

	SetStatus(ctx context.Context, commit string, s Status) error
	Review(ctx context.Context, number int, r ReviewIn) error
	Reviews(ctx context.Context, number int) ([]Review, error)
	Comments(ctx context.Context, number int) ([]Comment, error)
	Comment(ctx context.Context, number int, body string) error

	// Merge merges the PR through the forge only while its head is
	// commit (ErrHeadMoved otherwise), as a fast-forward where the forge
	// can (Gitea's fast-forward-only, GitLab's ff) and as a merge commit
	// elsewhere; it returns the commit the base branch is at after it.
	Merge(ctx context.Context, number int, commit, message string) (string, error)
	// Enqueue hands the PR, pinned to commit, to the forge's own merge
	// queue or merge train; ErrRefused where the forge has none.
	Enqueue(ctx context.Context, number int, commit string) error
	// MarkMerged records a PR as merged by commit, which fleetwatch's
	// queue pushed to the base branch itself (Gitea's manually-merged);
	// a no-op where the forge sees that on its own.
	MarkMerged(ctx context.Context, number int, commit string) error
}
