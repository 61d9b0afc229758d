package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	gitlab "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/fleetwatch/fleetwatch/internal/config"
)

// GitLab (gitlab.com and self-managed) through client-go: merge requests
// are PRs, the project is named by its path ("group/sub/name").

func init() { kinds[config.ForgeGitLab] = newGitLab }

type gitLab struct {
	web, project, token string
	client              *gitlab.Client
}

// noLimit stands in for client-go's rate limiter, which paces itself by
// the forge's RateLimit-Limit header: a forge's header must not stall a
// call past what its context allows, and the forge refuses with 429 anyway.
type noLimit struct{}

func (noLimit) Wait(context.Context) error { return nil }

func newGitLab(c Conn) (Forge, error) {
	cl, err := gitlab.NewClient(c.Token,
		gitlab.WithBaseURL(c.URL+"/api/v4"),
		gitlab.WithHTTPClient(boundHTTP(c.HTTP)),
		// One call is one call: the caller (the queue) decides on retries.
		gitlab.WithoutRetries(),
		gitlab.WithCustomLimiter(noLimit{}),
	)
	if err != nil {
		return nil, fmt.Errorf("forge: gitlab: url %q: %v", c.URL, err)
	}
	return &gitLab{web: c.URL, project: c.Repo, token: c.Token, client: cl}, nil
}

func (g *gitLab) Kind() string   { return config.ForgeGitLab }
func (g *gitLab) Web() string    { return g.web + "/" + g.project }
func (g *gitLab) Remote() string { return g.Web() + ".git" }
func (g *gitLab) GitEnv() []string {
	return basicAuthEnv(g.web+"/", "oauth2", g.token)
}

// glCode is the status of a failed call, 0 when none came back.
func glCode(resp *gitlab.Response, err error) int {
	if resp != nil && resp.Response != nil {
		return resp.StatusCode
	}
	var er *gitlab.ErrorResponse
	if errors.As(err, &er) {
		return er.StatusCode
	}
	return 0
}

func glMessage(err error) string {
	var er *gitlab.ErrorResponse
	if errors.As(err, &er) && er.Message != "" {
		return er.Message
	}
	return err.Error()
}

// glErr names what failed and maps the forge's status to the errors a
// caller acts on.
func glErr(what string, resp *gitlab.Response, err error) error {
	if err == nil {
		return nil
	}
	code := glCode(resp, err)
	switch code {
	case http.StatusNotFound:
		return fmt.Errorf("forge: gitlab: %s: %w", what, ErrNotFound)
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusMethodNotAllowed,
		http.StatusNotAcceptable, http.StatusConflict, http.StatusUnprocessableEntity:
		return fmt.Errorf("forge: gitlab: %s: %w (%d: %s)", what, ErrRefused, code, forgeWords(glMessage(err)))
	}
	if code >= 300 {
		return fmt.Errorf("forge: gitlab: %s: %d: %s", what, code, forgeWords(glMessage(err)))
	}
	return fmt.Errorf("forge: gitlab: %s: %w", what, err)
}

// glAll reads every page of a listing, following X-Next-Page forward
// only, at most pageCap.
func glAll[T any](what string, page func(lo gitlab.ListOptions) ([]T, *gitlab.Response, error)) ([]T, error) {
	lo := gitlab.ListOptions{PerPage: 100}
	var out []T
	for range pageCap {
		items, resp, err := page(lo)
		if err != nil {
			return nil, glErr(what, resp, err)
		}
		out = append(out, items...)
		if resp.NextPage <= lo.Page {
			return out, nil
		}
		lo.Page = resp.NextPage
	}
	return nil, pageErr("gitlab", what)
}

// errNoAnswer is a call that succeeded with nothing in its answer.
func errNoAnswer(what string) error {
	return fmt.Errorf("forge: gitlab: %s: the answer is empty", what)
}

// glStates are a merge request's states as a PR's; locked is an MR in
// the middle of being merged.
var glStates = map[string]string{"opened": StateOpen, "locked": StateOpen, "closed": StateClosed, "merged": StateMerged}

func glPR(m *gitlab.BasicMergeRequest) PR {
	pr := PR{
		Number: int(m.IID), State: glStates[m.State], Title: m.Title,
		Head: m.SourceBranch, HeadSHA: m.SHA, Base: m.TargetBranch, URL: m.WebURL,
	}
	if pr.State == "" {
		pr.State = StateClosed // an unknown state is not taken as open
	}
	if m.UpdatedAt != nil {
		pr.Updated = *m.UpdatedAt
	}
	if pr.State == StateMerged {
		pr.MergeCommit = glMergedAt(m)
	}
	return pr
}

// glMergedAt is the commit a merged MR left its target at: the merge
// commit, else the squashed commit, else nothing known (a fast-forward
// names none).
func glMergedAt(m *gitlab.BasicMergeRequest) string {
	for _, sha := range []string{m.MergeCommitSHA, m.SquashCommitSHA} {
		if isSHA(sha) {
			return sha
		}
	}
	return ""
}

// glPipelineChecks are the head pipeline's states as PR.Checks.
var glPipelineChecks = map[string]string{
	"success": StatusSuccess, "failed": StatusFailure, "canceled": StatusFailure,
	"created": StatusPending, "waiting_for_resource": StatusPending, "preparing": StatusPending,
	"pending": StatusPending, "running": StatusPending, "scheduled": StatusPending, "manual": StatusPending,
}

// glSafe turns a panic in client-go into err: its MR listings
// dereference every entry, and a hostile forge may send null for one.
func glSafe(what string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("forge: gitlab: %s: the answer broke the client: %v", what, r)
	}
}

// Find is the newest MR from head into base, in any state.
func (g *gitLab) Find(ctx context.Context, head, base string) (_ PR, _ bool, err error) {
	defer glSafe("find the MR of "+head, &err)
	opts := &gitlab.ListProjectMergeRequestsOptions{
		SourceBranch: gitlab.Ptr(head), TargetBranch: gitlab.Ptr(base),
		OrderBy: gitlab.Ptr("created_at"), Sort: gitlab.Ptr("desc"),
		ListOptions: gitlab.ListOptions{PerPage: 20},
	}
	ms, resp, err := g.client.MergeRequests.ListProjectMergeRequests(g.project, opts, gitlab.WithContext(ctx))
	if err != nil {
		return PR{}, false, glErr("find the MR of "+head, resp, err)
	}
	var best *gitlab.BasicMergeRequest
	for _, m := range ms {
		// The forge's filter is checked, not trusted.
		if m != nil && m.SourceBranch == head && m.TargetBranch == base && (best == nil || m.IID > best.IID) {
			best = m
		}
	}
	if best == nil {
		return PR{}, false, nil
	}
	return glPR(best), true, nil
}

// Get reads MR number; its checks are its head pipeline's, when that
// pipeline ran on the MR's head.
func (g *gitLab) Get(ctx context.Context, number int) (PR, error) {
	m, resp, err := g.client.MergeRequests.GetMergeRequest(g.project, int64(number), nil, gitlab.WithContext(ctx))
	if err != nil {
		return PR{}, glErr(fmt.Sprintf("MR %d", number), resp, err)
	}
	if m == nil {
		return PR{}, errNoAnswer(fmt.Sprintf("MR %d", number))
	}
	pr := glPR(&m.BasicMergeRequest)
	if pr.Number != number {
		return PR{}, fmt.Errorf("forge: gitlab: asked for MR %d, got %d", number, pr.Number)
	}
	if p := m.HeadPipeline; p != nil && p.SHA == pr.HeadSHA {
		pr.Checks = glPipelineChecks[p.Status]
	}
	return pr, nil
}

// List reads every open MR into base, 100 a page, following X-Next-Page.
// Checks stay "": the list leaves out the head pipeline, and one more
// call per MR would not list 100 in a second; Get fills them.
func (g *gitLab) List(ctx context.Context, base string) (_ []PR, err error) {
	defer glSafe("list the MRs into "+base, &err)
	opts := &gitlab.ListProjectMergeRequestsOptions{State: gitlab.Ptr("opened"), TargetBranch: gitlab.Ptr(base)}
	ms, err := glAll("list the MRs into "+base, func(lo gitlab.ListOptions) ([]*gitlab.BasicMergeRequest, *gitlab.Response, error) {
		opts.ListOptions = lo
		return g.client.MergeRequests.ListProjectMergeRequests(g.project, opts, gitlab.WithContext(ctx))
	})
	var out []PR
	for _, m := range ms {
		if m == nil {
			continue
		}
		if pr := glPR(m); pr.State == StateOpen && pr.Base == base {
			out = append(out, pr)
		}
	}
	return out, err
}

// Ensure updates the open MR of p.Head into p.Base or opens one.
func (g *gitLab) Ensure(ctx context.Context, p NewPR) (PR, error) {
	old, ok, err := g.Find(ctx, p.Head, p.Base)
	if err != nil {
		return PR{}, err
	}
	if ok && old.State == StateOpen {
		upd := &gitlab.UpdateMergeRequestOptions{Title: gitlab.Ptr(p.Title), Description: gitlab.Ptr(p.Body)}
		m, resp, err := g.client.MergeRequests.UpdateMergeRequest(g.project, int64(old.Number), upd, gitlab.WithContext(ctx))
		if err != nil {
			return PR{}, glErr(fmt.Sprintf("update MR %d", old.Number), resp, err)
		}
		if m == nil {
			return PR{}, errNoAnswer(fmt.Sprintf("update MR %d", old.Number))
		}
		return glPR(&m.BasicMergeRequest), nil
	}
	nw := &gitlab.CreateMergeRequestOptions{
		Title: gitlab.Ptr(p.Title), Description: gitlab.Ptr(p.Body),
		SourceBranch: gitlab.Ptr(p.Head), TargetBranch: gitlab.Ptr(p.Base),
	}
	m, resp, err := g.client.MergeRequests.CreateMergeRequest(g.project, nw, gitlab.WithContext(ctx))
	if err != nil {
		return PR{}, glErr("open the MR of "+p.Head, resp, err)
	}
	if m == nil {
		return PR{}, errNoAnswer("open the MR of " + p.Head)
	}
	return glPR(&m.BasicMergeRequest), nil
}

// Merge accepts MR number only while its head is commit (GitLab answers
// 409 when it moved), by the project's merge method.
func (g *gitLab) Merge(ctx context.Context, number int, commit, message string) (string, error) {
	opts := &gitlab.AcceptMergeRequestOptions{SHA: gitlab.Ptr(commit)}
	if message != "" {
		opts.MergeCommitMessage = gitlab.Ptr(message)
	}
	m, resp, err := g.client.MergeRequests.AcceptMergeRequest(g.project, int64(number), opts, gitlab.WithContext(ctx))
	what := fmt.Sprintf("merge MR %d at %s", number, commit)
	if err != nil {
		if glCode(resp, err) == http.StatusConflict {
			return "", fmt.Errorf("forge: gitlab: %s: %w (%s)", what, ErrHeadMoved, forgeWords(glMessage(err)))
		}
		return "", glErr(what, resp, err)
	}
	if m == nil {
		return "", errNoAnswer(what)
	}
	if m.State != "merged" {
		return "", fmt.Errorf("forge: gitlab: %s: %w (the MR is %s: %s)", what, ErrRefused, forgeWords(m.State), forgeWords(m.MergeError))
	}
	if sha := glMergedAt(&m.BasicMergeRequest); sha != "" {
		return sha, nil
	}
	if m.SHA == commit {
		return commit, nil // a fast-forward: the target is at the head
	}
	return "", fmt.Errorf("forge: gitlab: %s: merged, but the answer names no commit it left %s at", what, m.TargetBranch)
}

// MarkMerged waits for GitLab to see that the MR's head reached its
// target: it records that on its own when the push arrives.
func (g *gitLab) MarkMerged(ctx context.Context, number int, commit string) error {
	return waitMerged(ctx, "gitlab", number, g.Get)
}

// Enqueue adds MR number, pinned to commit, to the project's merge train
// once its pipeline passes. Where the forge has no trains (GitLab Free:
// the call is not found or refused as a bad request) it sets auto-merge
// instead, pinned the same way: the forge merges when the pipeline passes.
func (g *gitLab) Enqueue(ctx context.Context, number int, commit string) error {
	what := fmt.Sprintf("enqueue MR %d at %s", number, commit)
	train := &gitlab.AddMergeRequestToMergeTrainOptions{SHA: gitlab.Ptr(commit), AutoMerge: gitlab.Ptr(true)}
	_, resp, err := g.client.MergeTrains.AddMergeRequestToMergeTrain(g.project, int64(number), train, gitlab.WithContext(ctx))
	if code := glCode(resp, err); err != nil && (code == http.StatusNotFound || code == http.StatusBadRequest) {
		auto := &gitlab.AcceptMergeRequestOptions{SHA: gitlab.Ptr(commit), AutoMerge: gitlab.Ptr(true)}
		_, resp, err = g.client.MergeRequests.AcceptMergeRequest(g.project, int64(number), auto, gitlab.WithContext(ctx))
	}
	if err != nil && glCode(resp, err) == http.StatusConflict {
		return fmt.Errorf("forge: gitlab: %s: %w (%s)", what, ErrHeadMoved, forgeWords(glMessage(err)))
	}
	return glErr(what, resp, err)
}
