package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"code.gitea.io/sdk/gitea"

	"github.com/fleetwatch/fleetwatch/internal/config"
)

// Gitea (and Forgejo) through code.gitea.io/sdk/gitea. The SDK keeps the
// context in the client, so every call makes a client of its own over the
// one bounded http.Client: two goroutines never share a context.

func init() { kinds[config.ForgeGitea] = newGitea }

type giteaForge struct {
	url, repo   string
	owner, name string
	token       string
	http        *http.Client
}

func newGitea(c Conn) (Forge, error) {
	if c.URL == "" {
		return nil, errors.New("forge: gitea: url: the forge's web address is needed, like url: https://git.example.com")
	}
	if i := strings.LastIndex(c.Repo, "/"); i <= 0 || i == len(c.Repo)-1 || strings.Count(c.Repo, "/") != 1 {
		return nil, fmt.Errorf("forge: gitea: repo %q: want owner/name", c.Repo)
	}
	hc := c.HTTP
	if hc == nil {
		hc = httpClient()
	}
	owner, name := repoPath(c.Repo)
	return &giteaForge{url: c.URL, repo: c.Repo, owner: owner, name: name, token: c.Token, http: boundedClient(hc)}, nil
}

func (g *giteaForge) Kind() string   { return config.ForgeGitea }
func (g *giteaForge) Web() string    { return g.url + "/" + g.repo }
func (g *giteaForge) Remote() string { return g.url + "/" + g.repo + ".git" }

// GitEnv sends the token as the basic-auth password: Gitea takes a token
// there whatever the user name.
func (g *giteaForge) GitEnv() []string {
	return basicAuthEnv(g.url+"/", "fleetwatch", g.token)
}

// client is an SDK client bound to ctx. The version check is off: it
// would cost a call per client, and fleetwatch needs Gitea 1.22 or later
// (pulls/{base}/{head}) whatever the SDK thinks.
func (g *giteaForge) client(ctx context.Context) *gitea.Client {
	c, _ := gitea.NewClient(g.url, gitea.SetHTTPClient(g.http), gitea.SetToken(g.token),
		gitea.SetContext(ctx), gitea.SetGiteaVersion(""), gitea.SetUserAgent("fleetwatch"))
	return c
}

func (g *giteaForge) Me(ctx context.Context) (User, error) {
	u, resp, err := g.client(ctx).GetMyUserInfo()
	if err != nil {
		return User{}, giteaErr("who am I", resp, err)
	}
	return User{Login: u.UserName}, nil
}

// Writer asks Gitea for login's permission on the repository (direct,
// through a team or as owner). Gitea answers that to site admins, repo
// admins and login themselves; to another token it is a refusal that
// says so, never a guess: an approval counts only from a writer.
func (g *giteaForge) Writer(ctx context.Context, login string) (bool, error) {
	if login == "" {
		return false, nil
	}
	p, resp, err := g.client(ctx).CollaboratorPermission(g.owner, g.name, login)
	if err != nil {
		err = giteaErr("the permission of "+login, resp, err)
		switch status(err) {
		case 404:
			return false, nil // no such user
		case 403:
			return false, fmt.Errorf("%w; fleetwatch's token needs admin on %s to tell who may approve", err, g.repo)
		}
		return false, err
	}
	if p == nil {
		return false, nil
	}
	switch p.Permission {
	case gitea.AccessModeWrite, gitea.AccessModeAdmin, gitea.AccessModeOwner:
		return true, nil
	}
	return false, nil
}

// Protection reads the branch as the token's user sees it: Gitea works
// out the push whitelist, the user's own permission and the rule that
// applies (rules may be globs) itself.
func (g *giteaForge) Protection(ctx context.Context, branch string) (Protection, error) {
	b, resp, err := g.client(ctx).GetRepoBranch(g.owner, g.name, branch)
	if err != nil {
		return Protection{}, giteaErr("branch "+branch, resp, err)
	}
	p := Protection{Protected: b.Protected, PushAllowed: b.UserCanPush}
	if b.Protected {
		p.Approvals = int(max(b.RequiredApprovals, 0))
		if b.EnableStatusCheck {
			p.Checks = append([]string(nil), b.StatusCheckContexts[:min(len(b.StatusCheckContexts), maxChecks)]...)
		}
	}
	return p, nil
}

// maxChecks bounds the status contexts read from a protection rule.
const maxChecks = 100

func (g *giteaForge) Get(ctx context.Context, number int) (PR, error) {
	p, resp, err := g.client(ctx).GetPullRequest(g.owner, g.name, int64(number))
	if err != nil {
		return PR{}, giteaErr(fmt.Sprintf("pull request #%d", number), resp, err)
	}
	pr := giteaPR(p)
	pr.Checks, err = g.checks(ctx, pr.HeadSHA)
	return pr, err
}

func (g *giteaForge) Find(ctx context.Context, head, base string) (PR, bool, error) {
	p, resp, err := g.client(ctx).GetPullRequestByBaseHead(g.owner, g.name, base, head)
	if err != nil {
		err = giteaErr(fmt.Sprintf("pull request from %s into %s", head, base), resp, err)
		if errors.Is(err, ErrNotFound) {
			return PR{}, false, nil
		}
		return PR{}, false, err
	}
	pr := giteaPR(p)
	if pr.State != StateOpen {
		// Gitea answers with any one of the pair's PRs; a newer one
		// may be open, or closed later.
		newest, found, err := g.newest(ctx, head, base, gitea.StateAll)
		if err != nil {
			return PR{}, false, err
		}
		if found && newest.Number > pr.Number {
			pr = newest
		}
	}
	pr.Checks, err = g.checks(ctx, pr.HeadSHA)
	return pr, true, err
}

// newest is the highest-numbered PR from head into base in state,
// reading every page.
func (g *giteaForge) newest(ctx context.Context, head, base string, state gitea.StateType) (PR, bool, error) {
	var best PR
	found := false
	err := g.eachPR(ctx, state, func(p PR) {
		if p.Head == head && p.Base == base && (!found || p.Number > best.Number) {
			best, found = p, true
		}
	})
	return best, found, err
}

// Page sizes and bounds on what is read from the forge.
const (
	pageSize = 50  // Gitea's default MAX_RESPONSE_ITEMS
	maxPages = 200 // 10000 PRs, reviews or comments
	maxTitle = 255 // Gitea's limit on a title
	maxBody  = 65000
	// statusCalls is how many combined-status calls List has in
	// flight: Gitea answers each in ~10 ms of its own CPU.
	statusCalls = 4
)

// eachPR calls f on every PR in state, page by page.
func (g *giteaForge) eachPR(ctx context.Context, state gitea.StateType, f func(PR)) error {
	c := g.client(ctx)
	for page := 1; ; page++ {
		if page > maxPages {
			return fmt.Errorf("forge: gitea: more than %d pull requests", maxPages*pageSize)
		}
		ps, resp, err := c.ListRepoPullRequests(g.owner, g.name, gitea.ListPullRequestsOptions{
			ListOptions: gitea.ListOptions{Page: page, PageSize: pageSize}, State: state,
		})
		if err != nil {
			return giteaErr("pull requests", resp, err)
		}
		for _, p := range ps {
			if p != nil {
				f(giteaPR(p))
			}
		}
		if len(ps) == 0 || resp == nil || resp.NextPage == 0 {
			return nil
		}
	}
}

// List reads the open PRs (the API cannot filter by base in the SDK)
// and fills each one's Checks, a few calls at a time.
func (g *giteaForge) List(ctx context.Context, base string) ([]PR, error) {
	var out []PR
	err := g.eachPR(ctx, gitea.StateOpen, func(p PR) {
		if p.Base == base {
			out = append(out, p)
		}
	})
	if err != nil {
		return nil, err
	}
	errs := make([]error, len(out))
	var wg sync.WaitGroup
	sem := make(chan struct{}, statusCalls)
	for i := range out {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i].Checks, errs[i] = g.checks(ctx, out[i].HeadSHA)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// checks is the combined status of commit: "" when none was posted.
// Gitea's warning counts as a failure: only success lets work land.
func (g *giteaForge) checks(ctx context.Context, commit string) (string, error) {
	if commit == "" {
		return "", nil
	}
	cs, resp, err := g.client(ctx).GetCombinedStatus(g.owner, g.name, commit)
	if err != nil {
		err = giteaErr("statuses of "+commit, resp, err)
		if errors.Is(err, ErrNotFound) {
			return "", nil
		}
		return "", err
	}
	if cs == nil || (cs.TotalCount == 0 && len(cs.Statuses) == 0) {
		return "", nil
	}
	switch cs.State {
	case gitea.StatusSuccess:
		return StatusSuccess, nil
	case gitea.StatusPending:
		return StatusPending, nil
	}
	return StatusFailure, nil
}

func giteaPR(p *gitea.PullRequest) PR {
	pr := PR{Number: int(p.Index), Title: p.Title, URL: p.HTMLURL, State: StateOpen}
	switch {
	case p.HasMerged:
		pr.State = StateMerged
	case p.State == gitea.StateClosed:
		pr.State = StateClosed
	}
	if p.Head != nil {
		pr.Head, pr.HeadSHA = p.Head.Ref, p.Head.Sha
	}
	if p.Base != nil {
		pr.Base = p.Base.Ref
	}
	if p.MergedCommitID != nil {
		pr.MergeCommit = *p.MergedCommitID
	}
	if p.Updated != nil {
		pr.Updated = *p.Updated
	}
	return pr
}
