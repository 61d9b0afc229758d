package forge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"code.gitea.io/sdk/gitea"
)

// Merge merges the PR through Gitea pinned to commit (head_commit_id:
// Gitea compares it with the head branch inside its merge and refuses
// with 409 "head out of date" when it moved). It merges fast-forward only,
// so that base ends exactly at commit; only a repository that disallows
// that style gets a merge commit. It returns where base is after.
func (g *giteaForge) Merge(ctx context.Context, number int, commit, message string) (string, error) {
	if commit == "" {
		return "", fmt.Errorf("forge: gitea: merge pull request #%d: no commit to pin it to", number)
	}
	p, resp, err := g.client(ctx).GetPullRequest(g.owner, g.name, int64(number))
	if err != nil {
		return "", giteaErr(fmt.Sprintf("pull request #%d", number), resp, err)
	}
	pr := giteaPR(p)
	if pr.State != StateOpen {
		return "", fmt.Errorf("forge: gitea: merge pull request #%d: %w: it is %s", number, ErrRefused, pr.State)
	}
	err = g.mergeAs(ctx, number, commit, message, gitea.MergeStyleFastForwardOnly)
	if errors.Is(err, errNoFastForward) {
		err = g.mergeAs(ctx, number, commit, message, gitea.MergeStyleMerge)
	}
	if err != nil {
		return "", err
	}
	b, resp, err := g.client(ctx).GetRepoBranch(g.owner, g.name, pr.Base)
	if err != nil {
		return "", giteaErr(fmt.Sprintf("branch %s after merging #%d", pr.Base, number), resp, err)
	}
	if b.Commit == nil || b.Commit.ID == "" {
		return "", fmt.Errorf("forge: gitea: branch %s after merging #%d: no commit in the answer", pr.Base, number)
	}
	return b.Commit.ID, nil
}

// mergeAs is one pinned merge in style, tried again while Gitea says
// the PR is still being checked after a push.
func (g *giteaForge) mergeAs(ctx context.Context, number int, commit, message string, style gitea.MergeStyle) error {
	opt := gitea.MergePullRequestOption{Style: style, HeadCommitId: commit}
	if style == gitea.MergeStyleMerge {
		opt.Title, opt.Message, _ = strings.Cut(strings.TrimSpace(message), "\n")
		opt.Title, opt.Message = clip(opt.Title, maxTitle), clip(strings.TrimSpace(opt.Message), maxBody)
	}
	what := fmt.Sprintf("merge pull request #%d at %s (%s)", number, clip(commit, 12), style)
	err := retry(ctx, pushLag, checkingAgain, func() error {
		wctx, w := withWords(ctx)
		ok, resp, err := g.client(wctx).MergePullRequest(g.owner, g.name, int64(number), opt)
		if err == nil && !ok {
			return w.refusal(what, resp)
		}
		return giteaErr(what, resp, err)
	})
	switch {
	case err == nil:
		return nil
	case status(err) == 409 && strings.Contains(err.Error(), "head out of date"):
		return fmt.Errorf("forge: gitea: %s: %w", what, ErrHeadMoved)
	case status(err) == 405 && strings.Contains(err.Error(), "merge style") && style == gitea.MergeStyleFastForwardOnly:
		return fmt.Errorf("%w: %w", errNoFastForward, err)
	case strings.Contains(err.Error(), "DivergingFastForwardOnly"):
		// Gitea 1.26 answers 500 when base moved past the PR's base.
		return fmt.Errorf("forge: gitea: %s: %w: the base branch has commits the head lacks, so it cannot fast-forward", what, ErrRefused)
	}
	return err
}

// errNoFastForward: the repository disallows fast-forward-only merges.
var errNoFastForward = errors.New("the repository does not allow fast-forward-only merges")

// checkingAgain: Gitea is still checking the PR after a push (405
// "Please try again later").
func checkingAgain(err error) bool {
	return status(err) == 405 && strings.Contains(err.Error(), "try again later")
}

// MarkMerged records the PR as merged by commit, which fleetwatch pushed
// to base itself (Gitea's manually-merged; Gitea checks that commit is on
// base). The repository must allow "mark as manually merged"; a PR Gitea
// already sees as merged is left as it is.
func (g *giteaForge) MarkMerged(ctx context.Context, number int, commit string) error {
	what := fmt.Sprintf("mark pull request #%d merged by %s", number, clip(commit, 12))
	err := retry(ctx, pushLag, checkingAgain, func() error {
		wctx, w := withWords(ctx)
		ok, resp, err := g.client(wctx).MergePullRequest(g.owner, g.name, int64(number), gitea.MergePullRequestOption{
			Style: gitea.MergeStyleManuallyMerged, MergeCommitID: commit,
		})
		if err == nil && !ok {
			return w.refusal(what, resp)
		}
		return giteaErr(what, resp, err)
	})
	switch {
	case status(err) == 405 && strings.Contains(err.Error(), "already merged"):
		return nil
	case status(err) == 405 && strings.Contains(err.Error(), "merge style"):
		return fmt.Errorf("%w; allow \"Mark as manually merged\" in the repository's settings", err)
	}
	return err
}
