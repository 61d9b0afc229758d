package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sync"

	"github.com/google/go-github/v81/github"
)

// GitHub's statuses, reviews, comments, the token's user and the base
// branch's protection.

// SetStatus posts s on commit (GitHub's states are fleetwatch's).
func (g *gitHub) SetStatus(ctx context.Context, commit string, s Status) error {
	if !slices.Contains([]string{StatusPending, StatusSuccess, StatusFailure, StatusError}, s.State) {
		return fmt.Errorf("forge: github: status %s: state %q: want pending, success, failure or error", s.Context, s.State)
	}
	st := github.RepoStatus{State: github.Ptr(s.State), Context: github.Ptr(s.Context), Description: github.Ptr(clip(s.Description, 140))}
	if s.TargetURL != "" {
		st.TargetURL = github.Ptr(s.TargetURL)
	}
	_, resp, err := g.client.Repositories.CreateStatus(ctx, g.owner, g.name, commit, st)
	return ghErr(fmt.Sprintf("status %s on %s", s.Context, commit), resp, err)
}

// Review posts r on commit as a COMMENT or REQUEST_CHANGES review, never
// APPROVE. GitHub refuses REQUEST_CHANGES on the token's own PR (which
// fleetwatch's PRs are): that one is posted again as a comment that says so.
func (g *gitHub) Review(ctx context.Context, number int, r ReviewIn) error {
	rv := &github.PullRequestReviewRequest{Body: github.Ptr(r.Body), Event: github.Ptr("COMMENT")}
	if r.Commit != "" { // else GitHub takes the head
		rv.CommitID = github.Ptr(r.Commit)
	}
	if r.RequestChanges {
		rv.Event = github.Ptr("REQUEST_CHANGES")
	}
	_, resp, err := g.client.PullRequests.CreateReview(ctx, g.owner, g.name, number, rv)
	if r.RequestChanges && ghCode(resp, err) == http.StatusUnprocessableEntity {
		rv.Event, rv.Body = github.Ptr("COMMENT"), github.Ptr("Changes requested: "+r.Body)
		_, resp, err = g.client.PullRequests.CreateReview(ctx, g.owner, g.name, number, rv)
	}
	return ghErr(fmt.Sprintf("review PR %d", number), resp, err)
}

// ghReviewStates are GitHub's review states as fleetwatch's; a PENDING
// review (a draft) is nobody's verdict yet and is left out.
var ghReviewStates = map[string]string{
	"APPROVED":          ReviewApproved,
	"CHANGES_REQUESTED": ReviewChangesRequested,
	"COMMENTED":         ReviewCommented,
	"DISMISSED":         ReviewDismissed,
}

// Reviews reads every review of PR number, all pages.
func (g *gitHub) Reviews(ctx context.Context, number int) ([]Review, error) {
	var out []Review
	err := ghPages(func(opts *github.ListOptions) (*github.Response, error) {
		rs, resp, err := g.client.PullRequests.ListReviews(ctx, g.owner, g.name, number, opts)
		for _, r := range rs {
			// A verdict with no author is nobody's.
			if st, ok := ghReviewStates[r.GetState()]; ok && r.GetUser().GetLogin() != "" {
				out = append(out, Review{ID: r.GetID(), Author: r.GetUser().GetLogin(), State: st, Commit: r.GetCommitID(), Body: r.GetBody(), At: r.GetSubmittedAt().Time})
			}
		}
		return resp, err
	})
	if err != nil {
		return nil, ghErr(fmt.Sprintf("the reviews of PR %d", number), nil, err)
	}
	return out, nil
}

// ghPages calls page for each page in turn, at most pageCap.
func ghPages(page func(*github.ListOptions) (*github.Response, error)) error {
	opts := &github.ListOptions{PerPage: 100}
	for range pageCap {
		resp, err := page(opts)
		if err != nil {
			return err
		}
		if resp.NextPage <= opts.Page {
			return nil
		}
		opts.Page = resp.NextPage
	}
	return fmt.Errorf("more than %d pages: %w", pageCap, ErrRefused)
}

// Comments reads the PR's conversation and its line comments, all pages
// of each.
func (g *gitHub) Comments(ctx context.Context, number int) ([]Comment, error) {
	var out []Comment
	err := ghPages(func(opts *github.ListOptions) (*github.Response, error) {
		cs, resp, err := g.client.Issues.ListComments(ctx, g.owner, g.name, number, &github.IssueListCommentsOptions{ListOptions: *opts})
		for _, c := range cs {
			out = append(out, Comment{ID: c.GetID(), Author: c.GetUser().GetLogin(), Body: c.GetBody(), At: c.GetCreatedAt().Time})
		}
		return resp, err
	})
	if err == nil {
		err = ghPages(func(opts *github.ListOptions) (*github.Response, error) {
			cs, resp, err := g.client.PullRequests.ListComments(ctx, g.owner, g.name, number, &github.PullRequestListCommentsOptions{ListOptions: *opts})
			for _, c := range cs {
				out = append(out, ghLineComment(c))
			}
			return resp, err
		})
	}
	if err != nil {
		return nil, ghErr(fmt.Sprintf("the comments of PR %d", number), nil, err)
	}
	return out, nil
}

// ghLineComment is a review comment; an outdated one keeps the line it
// was written on.
func ghLineComment(c *github.PullRequestComment) Comment {
	line := c.GetLine()
	if line == 0 {
		line = c.GetOriginalLine()
	}
	return Comment{ID: c.GetID(), Author: c.GetUser().GetLogin(), Body: c.GetBody(), Path: c.GetPath(), Line: line, At: c.GetCreatedAt().Time}
}

// Comment posts body on PR number's conversation.
func (g *gitHub) Comment(ctx context.Context, number int, body string) error {
	_, resp, err := g.client.Issues.CreateComment(ctx, g.owner, g.name, number, &github.IssueComment{Body: github.Ptr(body)})
	return ghErr(fmt.Sprintf("comment on PR %d", number), resp, err)
}

// Me is the token's user and, for a classic token, its scopes.
func (g *gitHub) Me(ctx context.Context) (User, error) {
	u, resp, err := g.client.Users.Get(ctx, "")
	if err != nil {
		return User{}, ghErr("the token's user", resp, err)
	}
	if u.GetLogin() == "" {
		return User{}, fmt.Errorf("forge: github: the token's user has no login")
	}
	return User{Login: u.GetLogin(), Scopes: scopes(resp.Header)}, nil
}

// ghLogin is what a GitHub login may be (an app's ends in [bot]); a
// name from the forge that is not one is never put in a path.
var ghLogin = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$`) })

// Writer asks GitHub for login's permission on the repository (write,
// maintain and admin read as write). GitHub answers it to a token that
// may push; to another it is a refusal that says so, never a guess.
func (g *gitHub) Writer(ctx context.Context, login string) (bool, error) {
	if !ghLogin().MatchString(login) {
		return false, nil
	}
	p, resp, err := g.client.Repositories.GetPermissionLevel(ctx, g.owner, g.name, url.PathEscape(login))
	if err != nil {
		err = ghErr("the permission of "+login, resp, err)
		switch {
		case errors.Is(err, ErrNotFound):
			return false, nil // no such user
		case errors.Is(err, ErrRefused):
			return false, fmt.Errorf("%w; fleetwatch's token needs push access to %s/%s to tell who may approve", err, g.owner, g.name)
		}
		return false, err
	}
	switch p.GetPermission() {
	case "admin", "write":
		return true, nil
	}
	return false, nil
}

// Protection reads branch's classic protection and the rulesets that
// apply to it (merge queues live only there): two calls, and Me's or
// the branch's one.
// It is cautious: a push counts as allowed only where nothing asks for
// a PR, no restriction leaves the token's user out, and the branch is not
// locked; admins' bypasses are not known from here and not assumed.
func (g *gitHub) Protection(ctx context.Context, branch string) (Protection, error) {
	out, err := g.classic(ctx, branch)
	if err != nil {
		return Protection{}, err
	}
	rules, resp, err := g.client.Repositories.GetRulesForBranch(ctx, g.owner, g.name, branch, &github.ListOptions{PerPage: 100})
	if err != nil && ghCode(resp, err) != http.StatusNotFound {
		return Protection{}, ghErr("the rules of "+branch, resp, err)
	}
	ghRules(&out, rules) // nil when GitHub has no rulesets (404)
	return out, nil
}

// classic reads branch's classic protection. Reading it takes admin
// rights on the repository; a token without them (404, 403) reads the
// branch's summary instead: whether it is protected and the checks it
// asks for, a push then taken as not allowed and approvals as unknown (0).
func (g *gitHub) classic(ctx context.Context, branch string) (Protection, error) {
	p, resp, err := g.client.Repositories.GetBranchProtection(ctx, g.owner, g.name, branch)
	switch {
	case errors.Is(err, github.ErrBranchNotProtected):
		return Protection{PushAllowed: true}, nil
	case err == nil:
		me, err := g.Me(ctx)
		if err != nil {
			return Protection{}, err
		}
		return ghProtection(p, me.Login), nil
	}
	if code := ghCode(resp, err); code != http.StatusNotFound && code != http.StatusForbidden {
		return Protection{}, ghErr("the protection of "+branch, resp, err)
	}
	// No redirects: go-github would follow the forge's Location itself.
	b, resp, err := g.client.Repositories.GetBranch(ctx, g.owner, g.name, branch, 0)
	if err != nil {
		return Protection{}, ghErr("branch "+branch, resp, err)
	}
	out := Protection{Protected: b.GetProtected(), PushAllowed: !b.GetProtected()}
	ghRequired(&out, b.GetProtection().GetRequiredStatusChecks())
	return out, nil
}

// ghProtection reads classic branch protection for the user login.
func ghProtection(p *github.Protection, login string) Protection {
	out := Protection{Protected: true, PushAllowed: true}
	if r := p.GetRequiredPullRequestReviews(); r != nil {
		out.Approvals = r.RequiredApprovingReviewCount
		out.PushAllowed = false // a push skips the reviews the branch asks for
	}
	if r := p.GetRestrictions(); r != nil && !slices.ContainsFunc(r.Users, func(u *github.User) bool { return u.GetLogin() == login }) {
		out.PushAllowed = false
	}
	if p.GetLockBranch().GetEnabled() {
		out.PushAllowed = false
	}
	ghRequired(&out, p.GetRequiredStatusChecks())
	return out
}

// ghRequired adds the contexts required status checks c name to out.
func ghRequired(out *Protection, c *github.RequiredStatusChecks) {
	if c == nil {
		return
	}
	for _, ctx := range c.GetContexts() {
		out.Checks = appendNew(out.Checks, ctx)
	}
	if c.Checks == nil {
		return
	}
	for _, ch := range *c.Checks {
		if ch != nil {
			out.Checks = appendNew(out.Checks, ch.Context)
		}
	}
}

// ghRules adds what the rulesets on a branch ask to out.
func ghRules(out *Protection, rules *github.BranchRules) {
	if rules == nil {
		return
	}
	if len(rules.PullRequest) > 0 || len(rules.Update) > 0 || len(rules.MergeQueue) > 0 {
		out.Protected, out.PushAllowed = true, false
	}
	for _, r := range rules.PullRequest {
		if r == nil {
			continue
		}
		out.Approvals = max(out.Approvals, r.Parameters.RequiredApprovingReviewCount)
	}
	for _, r := range rules.RequiredStatusChecks {
		if r == nil {
			continue
		}
		out.Protected = true
		for _, c := range r.Parameters.RequiredStatusChecks {
			if c != nil {
				out.Checks = appendNew(out.Checks, c.Context)
			}
		}
	}
	out.MergeQueue = len(rules.MergeQueue) > 0
}

func appendNew(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
