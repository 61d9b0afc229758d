package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v81/github"

	"github.com/fleetwatch/fleetwatch/internal/config"
)

// GitHub (github.com and GitHub Enterprise Server) through go-github's
// REST client. Every field go-github hands back is a pointer that a
// hostile or older server may leave out, so it is read through the
// library's nil-safe getters only.

func init() { kinds[config.ForgeGitHub] = newGitHub }

// gitHubDotCom is the public GitHub; any other URL is an Enterprise Server.
const gitHubDotCom = "https://github.com"

type gitHub struct {
	web         string // the forge's web address
	owner, name string
	token       string
	client      *github.Client
}

func newGitHub(c Conn) (Forge, error) {
	if c.URL == "" {
		c.URL = gitHubDotCom
	}
	cl := github.NewClient(boundHTTP(c.HTTP)).WithAuthToken(c.Token)
	if c.URL != gitHubDotCom {
		var err error
		if cl, err = cl.WithEnterpriseURLs(c.URL+"/api/v3/", c.URL+"/api/uploads/"); err != nil {
			return nil, fmt.Errorf("forge: github: url %q: %v", c.URL, err)
		}
	}
	owner, name := repoPath(c.Repo)
	return &gitHub{web: c.URL, owner: owner, name: name, token: c.Token, client: cl}, nil
}

func (g *gitHub) Kind() string   { return config.ForgeGitHub }
func (g *gitHub) Web() string    { return g.web + "/" + g.owner + "/" + g.name }
func (g *gitHub) Remote() string { return g.Web() + ".git" }
func (g *gitHub) GitEnv() []string {
	return basicAuthEnv(g.web+"/", "x-access-token", g.token)
}

// ghErr names what failed and maps the forge's status to the errors a
// caller acts on; the forge's message is quoted, clipped.
func ghErr(what string, resp *github.Response, err error) error {
	if err == nil {
		return nil
	}
	code, msg := ghCode(resp, err), ghMessage(err)
	switch code {
	case http.StatusNotFound:
		return fmt.Errorf("forge: github: %s: %w (%s)", what, ErrNotFound, forgeWords(msg))
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusMethodNotAllowed, http.StatusConflict, http.StatusUnprocessableEntity:
		return fmt.Errorf("forge: github: %s: %w (%d: %s)", what, ErrRefused, code, forgeWords(msg))
	}
	if code >= 300 {
		return fmt.Errorf("forge: github: %s: %d: %s", what, code, forgeWords(msg))
	}
	return fmt.Errorf("forge: github: %s: %w", what, err)
}

// ghPR is p as fleetwatch reads it. GitHub has no merged state: a closed
// PR with merged_at is merged (the list answers leave `merged` out), and
// merge_commit_sha names a test merge while the PR is open, so it is kept
// only once merged.
func ghPR(p *github.PullRequest) PR {
	pr := PR{
		Number:  p.GetNumber(),
		State:   StateClosed,
		Title:   p.GetTitle(),
		Head:    p.GetHead().GetRef(),
		HeadSHA: p.GetHead().GetSHA(),
		Base:    p.GetBase().GetRef(),
		URL:     p.GetHTMLURL(),
		Updated: p.GetUpdatedAt().Time,
	}
	switch {
	case p.GetMerged() || !p.GetMergedAt().IsZero():
		pr.State = StateMerged
		if sha := p.GetMergeCommitSHA(); isSHA(sha) {
			pr.MergeCommit = sha
		}
	case p.GetState() == "open":
		pr.State = StateOpen
	}
	return pr
}

// Find asks for the PRs of owner:head into base, newest first; the first
// page is enough, and the highest number wins should the order be off.
func (g *gitHub) Find(ctx context.Context, head, base string) (PR, bool, error) {
	opts := &github.PullRequestListOptions{
		State: "all", Head: g.owner + ":" + head, Base: base,
		Sort: "created", Direction: "desc", ListOptions: github.ListOptions{PerPage: 20},
	}
	prs, resp, err := g.client.PullRequests.List(ctx, g.owner, g.name, opts)
	if err != nil {
		return PR{}, false, ghErr("find the PR of "+head, resp, err)
	}
	var best *github.PullRequest
	for _, p := range prs {
		// The forge's filter is checked, not trusted.
		if p.GetHead().GetRef() == head && p.GetBase().GetRef() == base && p.GetNumber() > best.GetNumber() {
			best = p
		}
	}
	if best == nil {
		return PR{}, false, nil
	}
	return ghPR(best), true, nil
}

// Get reads PR number and the combined status of its head (one more call).
func (g *gitHub) Get(ctx context.Context, number int) (PR, error) {
	pr, err := g.pull(ctx, number)
	if err != nil || pr.HeadSHA == "" {
		return pr, err
	}
	cs, resp, err := g.client.Repositories.GetCombinedStatus(ctx, g.owner, g.name, pr.HeadSHA, &github.ListOptions{PerPage: 1})
	if err != nil {
		return PR{}, ghErr(fmt.Sprintf("the checks of PR %d", number), resp, err)
	}
	pr.Checks = ghChecks(cs)
	return pr, nil
}

// pull reads PR number alone, without its checks.
func (g *gitHub) pull(ctx context.Context, number int) (PR, error) {
	p, resp, err := g.client.PullRequests.Get(ctx, g.owner, g.name, number)
	if err != nil {
		return PR{}, ghErr(fmt.Sprintf("PR %d", number), resp, err)
	}
	if pr := ghPR(p); pr.Number == number {
		return pr, nil
	}
	return PR{}, fmt.Errorf("forge: github: asked for PR %d, got %d", number, p.GetNumber())
}

// ghChecks is a combined status as PR.Checks: GitHub says pending when
// nothing was posted at all, which is "" here.
func ghChecks(cs *github.CombinedStatus) string {
	if cs.GetTotalCount() == 0 {
		return ""
	}
	switch s := cs.GetState(); s {
	case StatusSuccess, StatusPending, StatusFailure:
		return s
	}
	return StatusFailure
}

// List reads every open PR into base, 100 a page. Checks stay "": the
// combined status is one call per PR on REST, and 100 PRs must list in
// under a second; Get fills them for the PR the queue acts on.
func (g *gitHub) List(ctx context.Context, base string) ([]PR, error) {
	opts := &github.PullRequestListOptions{State: "open", Base: base}
	var out []PR
	err := ghPages(func(lo *github.ListOptions) (*github.Response, error) {
		opts.ListOptions = *lo
		prs, resp, err := g.client.PullRequests.List(ctx, g.owner, g.name, opts)
		for _, p := range prs {
			if pr := ghPR(p); pr.State == StateOpen && pr.Base == base {
				out = append(out, pr)
			}
		}
		return resp, err
	})
	if err != nil {
		return nil, ghErr("list the PRs into "+base, nil, err)
	}
	return out, nil
}

// Ensure edits the open PR of p.Head into p.Base or opens one.
func (g *gitHub) Ensure(ctx context.Context, p NewPR) (PR, error) {
	old, ok, err := g.Find(ctx, p.Head, p.Base)
	if err != nil {
		return PR{}, err
	}
	if ok && old.State == StateOpen {
		edit := &github.PullRequest{Title: github.Ptr(p.Title), Body: github.Ptr(p.Body)}
		pr, resp, err := g.client.PullRequests.Edit(ctx, g.owner, g.name, old.Number, edit)
		if err != nil {
			return PR{}, ghErr(fmt.Sprintf("update PR %d", old.Number), resp, err)
		}
		return ghPR(pr), nil
	}
	nw := &github.NewPullRequest{Title: github.Ptr(p.Title), Head: github.Ptr(p.Head), Base: github.Ptr(p.Base), Body: github.Ptr(p.Body)}
	pr, resp, err := g.client.PullRequests.Create(ctx, g.owner, g.name, nw)
	if err != nil {
		return PR{}, ghErr("open the PR of "+p.Head, resp, err)
	}
	return ghPR(pr), nil
}

// Merge merges PR number with a merge commit only while its head is
// commit: GitHub checks the sha itself and answers 409 when it moved.
func (g *gitHub) Merge(ctx context.Context, number int, commit, message string) (string, error) {
	opts := &github.PullRequestOptions{SHA: commit, MergeMethod: "merge"}
	res, resp, err := g.client.PullRequests.Merge(ctx, g.owner, g.name, number, message, opts)
	if err != nil {
		what := fmt.Sprintf("merge PR %d at %s", number, commit)
		if ghCode(resp, err) == http.StatusConflict {
			return "", fmt.Errorf("forge: github: %s: %w (%s)", what, ErrHeadMoved, forgeWords(ghMessage(err)))
		}
		return "", ghErr(what, resp, err)
	}
	if !res.GetMerged() || !isSHA(res.GetSHA()) {
		return "", fmt.Errorf("forge: github: merge PR %d: %w (merged %t, commit %q: %s)", number, ErrRefused, res.GetMerged(), clip(res.GetSHA(), 64), forgeWords(res.GetMessage()))
	}
	return res.GetSHA(), nil
}

// ghCode is the status of a failed call, 0 when none came back.
func ghCode(resp *github.Response, err error) int {
	var er *github.ErrorResponse
	switch {
	case resp != nil && resp.Response != nil:
		return resp.StatusCode
	case errors.As(err, &er) && er.Response != nil:
		return er.Response.StatusCode // a listing's page hands back no resp
	}
	return 0
}

func ghMessage(err error) string {
	var er *github.ErrorResponse
	if errors.As(err, &er) {
		return er.Message
	}
	return err.Error()
}

// MarkMerged waits for GitHub to see that the PR's head reached its base:
// it records that on its own, and offers no call to record it.
func (g *gitHub) MarkMerged(ctx context.Context, number int, commit string) error {
	return waitMerged(ctx, "github", number, g.pull)
}

// Enqueue is refused: GitHub's merge queue takes PRs through GraphQL's
// enqueuePullRequest only, which go-github's REST client does not offer.
func (g *gitHub) Enqueue(ctx context.Context, number int, commit string) error {
	return fmt.Errorf("forge: github: enqueue PR %d: %w (GitHub's merge queue takes PRs through GraphQL only, which go-github does not offer: add it to the queue on GitHub, and queue sync follows the merge)", number, ErrRefused)
}

// scopes is GitHub's X-OAuth-Scopes header as a list; nil when the
// header is absent (fine-grained tokens and apps send none).
func scopes(h http.Header) []string {
	v, ok := h["X-Oauth-Scopes"]
	if !ok || len(v) == 0 {
		return nil
	}
	out := []string{}
	for _, s := range strings.Split(v[0], ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, clip(s, 64))
		}
	}
	return out
}
