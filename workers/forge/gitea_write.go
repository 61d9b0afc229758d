package forge

import (
	"context"
	"fmt"
	"strings"
	"time"

	"code.gitea.io/sdk/gitea"
)

// pushLag bounds the retries of a call Gitea refuses for a moment after a
// push (opening a PR from a new branch: ~0.6 s; merging it: ~1.4 s).
const pushLag = 15 * time.Second

// Ensure opens the PR or brings the open one up to date; a PR another
// Ensure opened meanwhile (409) is found and updated, never doubled.
func (g *giteaForge) Ensure(ctx context.Context, p NewPR) (PR, error) {
	title, body := clip(p.Title, maxTitle), clip(p.Body, maxBody)
	if pr, ok, err := g.findOpen(ctx, p.Head, p.Base); err != nil || ok {
		if err != nil {
			return PR{}, err
		}
		return g.update(ctx, pr, title, body)
	}
	what := fmt.Sprintf("open a pull request from %s into %s", p.Head, p.Base)
	var made *gitea.PullRequest
	err := retry(ctx, pushLag, branchNotYet, func() error {
		var resp *gitea.Response
		var err error
		made, resp, err = g.client(ctx).CreatePullRequest(g.owner, g.name, gitea.CreatePullRequestOption{
			Head: p.Head, Base: p.Base, Title: title, Body: body,
		})
		return giteaErr(what, resp, err)
	})
	if status(err) == 409 {
		if pr, ok, ferr := g.findOpen(ctx, p.Head, p.Base); ferr == nil && ok {
			return g.update(ctx, pr, title, body)
		}
	}
	if err != nil {
		return PR{}, err
	}
	pr := giteaPR(made)
	pr.Checks, err = g.checks(ctx, pr.HeadSHA)
	return pr, err
}

// branchNotYet: Gitea does not know a just-pushed branch yet.
func branchNotYet(err error) bool {
	return status(err) == 404 || (status(err) == 422 && strings.Contains(err.Error(), "must be branches"))
}

// findOpen is the open PR from head into base (Gitea keeps one at most).
func (g *giteaForge) findOpen(ctx context.Context, head, base string) (PR, bool, error) {
	pr, ok, err := g.Find(ctx, head, base)
	if err != nil || !ok || pr.State == StateOpen {
		return pr, ok && pr.State == StateOpen, err
	}
	return g.newest(ctx, head, base, gitea.StateOpen)
}

func (g *giteaForge) update(ctx context.Context, pr PR, title, body string) (PR, error) {
	p, resp, err := g.client(ctx).EditPullRequest(g.owner, g.name, int64(pr.Number), gitea.EditPullRequestOption{
		Title: title, Body: &body,
	})
	if err != nil {
		return PR{}, giteaErr(fmt.Sprintf("edit pull request #%d", pr.Number), resp, err)
	}
	out := giteaPR(p)
	out.Checks, err = g.checks(ctx, out.HeadSHA)
	return out, err
}

// maxDescription is what Gitea keeps of a status's description.
const maxDescription = 140

func (g *giteaForge) SetStatus(ctx context.Context, commit string, s Status) error {
	state := gitea.StatusState(s.State)
	switch state {
	case gitea.StatusPending, gitea.StatusSuccess, gitea.StatusFailure, gitea.StatusError:
	default:
		return fmt.Errorf("forge: gitea: status %q of %s: want pending, success, failure or error", s.State, s.Context)
	}
	_, resp, err := g.client(ctx).CreateStatus(g.owner, g.name, commit, gitea.CreateStatusOption{
		State: state, Context: s.Context, Description: clip(s.Description, maxDescription), TargetURL: s.TargetURL,
	})
	return giteaErr(fmt.Sprintf("status %s of %s", s.Context, commit), resp, err)
}

// Review posts a comment, or a request for changes; Gitea refuses the
// latter on the token's user's own PR (422), and then it is a comment.
// It never approves.
func (g *giteaForge) Review(ctx context.Context, number int, r ReviewIn) error {
	post := func(state gitea.ReviewStateType) error {
		_, resp, err := g.client(ctx).CreatePullReview(g.owner, g.name, int64(number), gitea.CreatePullReviewOptions{
			State: state, Body: clip(r.Body, maxBody), CommitID: r.Commit,
		})
		return giteaErr(fmt.Sprintf("review pull request #%d", number), resp, err)
	}
	if r.RequestChanges {
		err := post(gitea.ReviewStateRequestChanges)
		if status(err) != 422 {
			return err
		}
	}
	return post(gitea.ReviewStateComment)
}

func (g *giteaForge) Reviews(ctx context.Context, number int) ([]Review, error) {
	rs, err := g.reviews(ctx, number)
	if err != nil {
		return nil, err
	}
	var out []Review
	for _, r := range rs {
		state := giteaReviewState(r)
		if state == "" {
			continue
		}
		rev := Review{ID: r.ID, State: state, Commit: r.CommitID, Body: r.Body, At: r.Submitted}
		if r.Reviewer != nil {
			rev.Author = r.Reviewer.UserName
		}
		out = append(out, rev)
	}
	return out, nil
}

// reviews is every review of the PR, all pages.
func (g *giteaForge) reviews(ctx context.Context, number int) ([]*gitea.PullReview, error) {
	c := g.client(ctx)
	var out []*gitea.PullReview
	for page := 1; page <= maxPages; page++ {
		rs, resp, err := c.ListPullReviews(g.owner, g.name, int64(number), gitea.ListPullReviewsOptions{
			ListOptions: gitea.ListOptions{Page: page, PageSize: pageSize},
		})
		if err != nil {
			return nil, giteaErr(fmt.Sprintf("reviews of pull request #%d", number), resp, err)
		}
		for _, r := range rs {
			if r != nil {
				out = append(out, r)
			}
		}
		if len(rs) == 0 || resp == nil || resp.NextPage == 0 {
			return out, nil
		}
	}
	return nil, fmt.Errorf("forge: gitea: pull request #%d has more than %d reviews", number, maxPages*pageSize)
}

// giteaReviewState is r's state, "" for what is not a given review (a
// pending draft, a request for one).
func giteaReviewState(r *gitea.PullReview) string {
	if r.Dismissed {
		return ReviewDismissed
	}
	switch r.State {
	case gitea.ReviewStateApproved:
		return ReviewApproved
	case gitea.ReviewStateRequestChanges:
		return ReviewChangesRequested
	case gitea.ReviewStateComment:
		return ReviewCommented
	}
	return ""
}

// Comments are the PR's comments, then the comments on lines of its
// change (each review's, for reviews that have some).
func (g *giteaForge) Comments(ctx context.Context, number int) ([]Comment, error) {
	out, err := g.issueComments(ctx, number)
	if err != nil {
		return nil, err
	}
	rs, err := g.reviews(ctx, number)
	if err != nil {
		return nil, err
	}
	c := g.client(ctx)
	for _, r := range rs {
		if r.CodeCommentsCount == 0 {
			continue
		}
		cs, resp, err := c.ListPullReviewComments(g.owner, g.name, int64(number), r.ID)
		if err != nil {
			return nil, giteaErr(fmt.Sprintf("comments of review %d", r.ID), resp, err)
		}
		for _, rc := range cs {
			if rc != nil {
				out = append(out, giteaLineComment(rc))
			}
		}
	}
	return out, nil
}

func giteaLineComment(rc *gitea.PullReviewComment) Comment {
	c := Comment{ID: rc.ID, Body: rc.Body, Path: rc.Path, At: rc.Created}
	// position is the new file's line; original_position the old one's.
	line := rc.LineNum
	if line == 0 {
		line = rc.OldLineNum
	}
	if line < 1<<31 {
		c.Line = int(line)
	}
	if rc.Reviewer != nil {
		c.Author = rc.Reviewer.UserName
	}
	return c
}

func (g *giteaForge) issueComments(ctx context.Context, number int) ([]Comment, error) {
	c := g.client(ctx)
	var out []Comment
	for page := 1; page <= maxPages; page++ {
		cs, resp, err := c.ListIssueComments(g.owner, g.name, int64(number), gitea.ListIssueCommentOptions{
			ListOptions: gitea.ListOptions{Page: page, PageSize: pageSize},
		})
		if err != nil {
			return nil, giteaErr(fmt.Sprintf("comments of pull request #%d", number), resp, err)
		}
		for _, ic := range cs {
			if ic == nil {
				continue
			}
			cm := Comment{ID: ic.ID, Body: ic.Body, At: ic.Created}
			if ic.Poster != nil {
				cm.Author = ic.Poster.UserName
			}
			out = append(out, cm)
		}
		if len(cs) == 0 || resp == nil || resp.NextPage == 0 {
			return out, nil
		}
	}
	return nil, fmt.Errorf("forge: gitea: pull request #%d has more than %d comments", number, maxPages*pageSize)
}

func (g *giteaForge) Comment(ctx context.Context, number int, body string) error {
	_, resp, err := g.client(ctx).CreateIssueComment(g.owner, g.name, int64(number), gitea.CreateIssueCommentOption{Body: clip(body, maxBody)})
	return giteaErr(fmt.Sprintf("comment on pull request #%d", number), resp, err)
}

// Enqueue: Gitea has no merge queue, and its auto-merge (merge when
// checks succeed) merges whatever the head is then, not a pinned commit.
func (g *giteaForge) Enqueue(ctx context.Context, number int, commit string) error {
	return fmt.Errorf("forge: gitea: pull request #%d: %w: Gitea has no merge queue (its auto-merge is not pinned to a commit); land with Merge", number, ErrRefused)
}
