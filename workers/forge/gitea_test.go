package forge

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/testkit/giteatest"
)

// giteaFix is one repository on the package's shared Gitea with main at
// a first commit, a work tree that pushes with the client's GitEnv, and
// the client as the admin.
type giteaFix struct {
	s    *giteatest.Server
	repo string
	w    *giteatest.Work
	f    Forge
	base string // main's first commit
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func newGiteaFix(t testing.TB) *giteaFix {
	t.Helper()
	s := giteatest.Shared(t)
	name := strings.ToLower(unsafeName.ReplaceAllString(t.Name(), "-"))
	repo := s.CreateRepo(t, s.Admin, clip(name, 90))
	f, err := newGitea(Conn{URL: s.URL, Repo: repo, Token: s.Token, HTTP: httpClient()})
	if err != nil {
		t.Fatal(err)
	}
	w := giteatest.NewWork(t)
	w.Env = f.GitEnv() // every push goes the way the product's do
	fx := &giteaFix{s: s, repo: repo, w: w, f: f}
	fx.base = w.Commit("README", "hello\n", "first")
	w.Git("push", "-q", f.Remote(), "main")
	s.WaitBranch(t, repo, "main", fx.base)
	return fx
}

// branch commits file on a new branch from main and pushes it.
func (fx *giteaFix) branch(t testing.TB, name, file string) string {
	t.Helper()
	fx.w.Git("checkout", "-q", "-B", name, "main")
	sha := fx.w.Commit(file, name+"\n", "work on "+name)
	fx.w.Git("push", "-q", fx.f.Remote(), name)
	return sha
}

// more adds a commit to branch name and pushes it.
func (fx *giteaFix) more(t testing.TB, name, file string) string {
	t.Helper()
	fx.w.Git("checkout", "-q", name)
	sha := fx.w.Commit(file, "more on "+name+"\n", "more on "+name)
	fx.w.Git("push", "-q", fx.f.Remote(), name)
	return sha
}

// featPR is branch feat (one commit, feat.txt) and its PR into main.
func (fx *giteaFix) featPR(t testing.TB, ctx context.Context) (string, PR) {
	t.Helper()
	head := fx.branch(t, "feat", "feat.txt")
	pr, err := fx.f.Ensure(ctx, NewPR{Head: "feat", Base: "main", Title: "feat"})
	if err != nil {
		t.Fatal(err)
	}
	return head, pr
}

func (fx *giteaFix) branchAt(t testing.TB, name string) string {
	t.Helper()
	owner, repo := repoPath(fx.repo)
	b, _, err := fx.s.Client(t).GetRepoBranch(owner, repo, name)
	if err != nil || b.Commit == nil {
		t.Fatalf("branch %s: %+v, %v", name, b, err)
	}
	return b.Commit.ID
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestGiteaEnsure: Ensure opens the PR once, then only edits it; Find,
// Get and List see the one PR with the pushed head.
func TestGiteaEnsure(t *testing.T) {
	t.Parallel() // most of the time is waiting for Gitea to catch up after a push
	fx := newGiteaFix(t)
	ctx := ctxT(t)
	head := fx.branch(t, "feat", "feat.txt")
	pr, err := fx.f.Ensure(ctx, NewPR{Head: "feat", Base: "main", Title: "feat: one", Body: "first body"})
	if err != nil {
		t.Fatal(err)
	}
	if pr.Number == 0 || pr.State != StateOpen || pr.Head != "feat" || pr.Base != "main" || pr.HeadSHA != head || pr.Title != "feat: one" {
		t.Fatalf("Ensure opened %+v, want feat→main at %s", pr, head)
	}
	again, err := fx.f.Ensure(ctx, NewPR{Head: "feat", Base: "main", Title: "feat: two", Body: "second body"})
	if err != nil {
		t.Fatal(err)
	}
	if again.Number != pr.Number || again.Title != "feat: two" {
		t.Fatalf("second Ensure = #%d %q, want #%d retitled", again.Number, again.Title, pr.Number)
	}
	got, err := fx.f.Get(ctx, pr.Number)
	if err != nil || got.Title != "feat: two" || got.HeadSHA != head || !strings.Contains(got.URL, fmt.Sprintf("/pulls/%d", pr.Number)) {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	list, err := fx.f.List(ctx, "main")
	if err != nil || len(list) != 1 || list[0].Number != pr.Number {
		t.Fatalf("List(main) = %+v, %v; want only #%d", list, err, pr.Number)
	}
	if other, err := fx.f.List(ctx, "release"); err != nil || len(other) != 0 {
		t.Fatalf("List(release) = %+v, %v; want none", other, err)
	}
	found, ok, err := fx.f.Find(ctx, "feat", "main")
	if err != nil || !ok || found.Number != pr.Number {
		t.Fatalf("Find = %+v, %v, %v", found, ok, err)
	}
	if _, ok, err := fx.f.Find(ctx, "nope", "main"); err != nil || ok {
		t.Fatalf("Find of a branch without a PR = %v, %v", ok, err)
	}
}

// TestGiteaEnsureRightAfterPush: a PR is opened from a branch pushed a
// moment ago (Gitea learns of it asynchronously).
func TestGiteaEnsureRightAfterPush(t *testing.T) {
	t.Parallel()
	fx := newGiteaFix(t)
	ctx := ctxT(t)
	for i := range 3 {
		name := fmt.Sprintf("fleetwatch/quick%d", i)
		head := fx.branch(t, name, fmt.Sprintf("quick%d.txt", i))
		pr, err := fx.f.Ensure(ctx, NewPR{Head: name, Base: "main", Title: name})
		if err != nil || pr.HeadSHA != head || pr.Head != name {
			t.Fatalf("Ensure right after pushing %s: %+v, %v", name, pr, err)
		}
	}
	// A base with a slash in its name, and a head too.
	fx.w.Git("push", "-q", fx.f.Remote(), "main:release/1.0")
	fx.s.WaitBranch(t, fx.repo, "release/1.0", fx.base)
	pr, err := fx.f.Ensure(ctx, NewPR{Head: "fleetwatch/quick0", Base: "release/1.0", Title: "backport"})
	if err != nil || pr.Base != "release/1.0" {
		t.Fatalf("Ensure into release/1.0: %+v, %v", pr, err)
	}
	again, err := fx.f.Ensure(ctx, NewPR{Head: "fleetwatch/quick0", Base: "release/1.0", Title: "backport 2"})
	if err != nil || again.Number != pr.Number || again.Title != "backport 2" {
		t.Fatalf("second Ensure into release/1.0: %+v, %v; want #%d retitled", again, err, pr.Number)
	}
}

// TestGiteaStatusChecks: statuses posted on the head make the PR's Checks.
func TestGiteaStatusChecks(t *testing.T) {
	t.Parallel()
	fx := newGiteaFix(t)
	ctx := ctxT(t)
	head, pr := fx.featPR(t, ctx)
	if pr.Checks != "" {
		t.Fatalf("Checks with no status = %q", pr.Checks)
	}
	steps := []struct{ state, want string }{
		{StatusPending, StatusPending}, {StatusSuccess, StatusSuccess}, {StatusFailure, StatusFailure}, {StatusError, StatusFailure},
	}
	for _, st := range steps {
		err := fx.f.SetStatus(ctx, head, Status{Context: "fleetwatch/test", State: st.state,
			Description: strings.Repeat("d", 300), TargetURL: "https://ci.example.com/1"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := fx.f.Get(ctx, pr.Number)
		if err != nil || got.Checks != st.want {
			t.Fatalf("after %s: Checks = %q, %v; want %q", st.state, got.Checks, err, st.want)
		}
	}
	if err := fx.f.SetStatus(ctx, head, Status{Context: "x", State: "warning"}); err == nil {
		t.Fatal("SetStatus took a state outside the four")
	}
}

// TestGiteaMergeFastForward: the merge leaves main exactly at the pinned
// commit, and the PR merged.
func TestGiteaMergeFastForward(t *testing.T) {
	t.Parallel()
	fx := newGiteaFix(t)
	ctx := ctxT(t)
	head, pr := fx.featPR(t, ctx)
	at, err := fx.f.Merge(ctx, pr.Number, head, "feat: land it")
	if err != nil {
		t.Fatal(err)
	}
	if at != head || fx.branchAt(t, "main") != head {
		t.Fatalf("Merge returned %s, main at %s; want both at the pinned %s", at, fx.branchAt(t, "main"), head)
	}
	got, err := fx.f.Get(ctx, pr.Number)
	if err != nil || got.State != StateMerged {
		t.Fatalf("after Merge: %+v, %v", got, err)
	}
	if _, err := fx.f.Merge(ctx, pr.Number, head, "again"); !errors.Is(err, ErrRefused) {
		t.Fatalf("second Merge: %v, want ErrRefused", err)
	}
}

// TestGiteaMergeHeadMoved: a commit pushed after the pinned one makes the
// merge refuse, and main stays where it was.
func TestGiteaMergeHeadMoved(t *testing.T) {
	t.Parallel()
	fx := newGiteaFix(t)
	ctx := ctxT(t)
	pinned, pr := fx.featPR(t, ctx)
	fx.more(t, "feat", "late.txt")
	_, err := fx.f.Merge(ctx, pr.Number, pinned, "feat")
	if !errors.Is(err, ErrHeadMoved) {
		t.Fatalf("Merge pinned to an old head: %v, want ErrHeadMoved", err)
	}
	if at := fx.branchAt(t, "main"); at != fx.base {
		t.Fatalf("main moved to %s after a refused merge", at)
	}
}

// TestGiteaMergeProtected: a merge the branch's protection does not allow
// yet is refused with Gitea's words; a person's approval and the check
// let it through.
func TestGiteaMergeProtected(t *testing.T) {
	t.Parallel()
	fx := newGiteaFix(t)
	ctx := ctxT(t)
	head, pr := fx.featPR(t, ctx)
	fx.s.ProtectBranch(t, fx.repo, "main", giteatest.Protection{Pushers: []string{}, Approvals: 1, Checks: []string{"fleetwatch/test"}})
	_, err := fx.f.Merge(ctx, pr.Number, head, "feat")
	if !errors.Is(err, ErrRefused) || errors.Is(err, ErrHeadMoved) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Merge without approval or check: %v, want a one-line ErrRefused", err)
	}
	t.Logf("refusal: %v", err)
	approve(t, fx, pr.Number, head)
	if err := fx.f.SetStatus(ctx, head, Status{Context: "fleetwatch/test", State: StatusSuccess}); err != nil {
		t.Fatal(err)
	}
	at, err := fx.f.Merge(ctx, pr.Number, head, "feat")
	if err != nil || at != head {
		t.Fatalf("Merge approved and checked = %s, %v; want %s", at, err, head)
	}
}

// reviewer is a second user of the shared server, a collaborator of fx's
// repository, with their own token.
func reviewer(t testing.TB, fx *giteaFix) (login string, c *gitea.Client) {
	t.Helper()
	login = "rev-" + fx.repo[strings.LastIndex(fx.repo, "/")+1:]
	login = clip(login, 38)
	tok := fx.s.NewUser(t, login)
	fx.s.Collaborate(t, fx.repo, login)
	return login, fx.s.ClientAs(t, tok)
}

func approve(t testing.TB, fx *giteaFix, number int, commit string) string {
	t.Helper()
	login, c := reviewer(t, fx)
	owner, name := repoPath(fx.repo)
	if _, _, err := c.CreatePullReview(owner, name, int64(number), gitea.CreatePullReviewOptions{
		State: gitea.ReviewStateApproved, Body: "looks right", CommitID: commit,
	}); err != nil {
		t.Fatalf("approve as %s: %v", login, err)
	}
	return login
}

// TestGiteaMarkMerged: after the head is pushed into main by git, the PR
// is recorded merged by that commit.
func TestGiteaMarkMerged(t *testing.T) {
	t.Parallel()
	fx := newGiteaFix(t)
	ctx := ctxT(t)
	head, pr := fx.featPR(t, ctx)
	if err := fx.f.MarkMerged(ctx, pr.Number, head); !errors.Is(err, ErrRefused) {
		t.Fatalf("MarkMerged before the commit is on main: %v, want ErrRefused", err)
	}
	fx.w.Git("push", "-q", fx.f.Remote(), "feat:main")
	fx.s.WaitBranch(t, fx.repo, "main", head)
	if err := fx.f.MarkMerged(ctx, pr.Number, head); err != nil {
		t.Fatal(err)
	}
	got, err := fx.f.Get(ctx, pr.Number)
	if err != nil || got.State != StateMerged || got.MergeCommit != head {
		t.Fatalf("after MarkMerged: %+v, %v; want merged by %s", got, err, head)
	}
	if err := fx.f.MarkMerged(ctx, pr.Number, head); err != nil {
		t.Fatalf("MarkMerged again: %v, want a no-op", err)
	}
	found, ok, err := fx.f.Find(ctx, "feat", "main")
	if err != nil || !ok || found.State != StateMerged {
		t.Fatalf("Find after the merge = %+v, %v, %v", found, ok, err)
	}
}

// TestGiteaProtection: unprotected, anyone with write may push; protected
// with a push whitelist, only those named may, and the rule's approvals
// and checks are read back.
func TestGiteaProtection(t *testing.T) {
	t.Parallel()
	fx := newGiteaFix(t)
	ctx := ctxT(t)
	p, err := fx.f.Protection(ctx, "main")
	if err != nil || p.Protected || !p.PushAllowed || p.Approvals != 0 || len(p.Checks) != 0 {
		t.Fatalf("unprotected main: %+v, %v", p, err)
	}
	login, _ := reviewer(t, fx)
	fx.s.ProtectBranch(t, fx.repo, "main", giteatest.Protection{
		Pushers: []string{fx.s.Admin}, Approvals: 2, Checks: []string{"fleetwatch/test", "fleetwatch/lint"},
	})
	p, err = fx.f.Protection(ctx, "main")
	if err != nil || !p.Protected || !p.PushAllowed || p.Approvals != 2 || !slices.Equal(p.Checks, []string{"fleetwatch/test", "fleetwatch/lint"}) {
		t.Fatalf("main protected, admin whitelisted: %+v, %v", p, err)
	}
	tok := fx.s.NewUser(t, login+"-b")
	fx.s.Collaborate(t, fx.repo, login+"-b")
	other, err := newGitea(Conn{URL: fx.s.URL, Repo: fx.repo, Token: tok, HTTP: httpClient()})
	if err != nil {
		t.Fatal(err)
	}
	p, err = other.Protection(ctx, "main")
	if err != nil || !p.Protected || p.PushAllowed {
		t.Fatalf("main as a writer not whitelisted: %+v, %v; want PushAllowed false", p, err)
	}
	if _, err := fx.f.Protection(ctx, "no-such-branch"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Protection of a missing branch: %v, want ErrNotFound", err)
	}
}

// TestGiteaReviewsAndComments: a person's approval comes back with its
// commit; fleetwatch's review never approves; a comment on a line comes
// back with its path and line, a PR comment without.
func TestGiteaReviewsAndComments(t *testing.T) {
	t.Parallel()
	fx := newGiteaFix(t)
	ctx := ctxT(t)
	fx.w.Git("checkout", "-q", "-B", "feat", "main")
	head := fx.w.Commit("code.go", "package code\n\nfunc A() {}\n\nfunc B() {}\n", "code")
	fx.w.Git("push", "-q", fx.f.Remote(), "feat")
	pr, err := fx.f.Ensure(ctx, NewPR{Head: "feat", Base: "main", Title: "code"})
	if err != nil {
		t.Fatal(err)
	}
	login, c := reviewer(t, fx)
	owner, name := repoPath(fx.repo)
	if _, _, err := c.CreatePullReview(owner, name, int64(pr.Number), gitea.CreatePullReviewOptions{
		State: gitea.ReviewStateComment, Body: "one note", CommitID: head,
		Comments: []gitea.CreatePullReviewComment{{Path: "code.go", Body: "name this better", NewLineNum: 3}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.CreatePullReview(owner, name, int64(pr.Number), gitea.CreatePullReviewOptions{
		State: gitea.ReviewStateApproved, Body: "ship it", CommitID: head,
	}); err != nil {
		t.Fatal(err)
	}
	if err := fx.f.Review(ctx, pr.Number, ReviewIn{Commit: head, Body: "needs work: tests", RequestChanges: true}); err != nil {
		t.Fatal(err)
	}
	if err := fx.f.Comment(ctx, pr.Number, "landing soon"); err != nil {
		t.Fatal(err)
	}
	rs, err := fx.f.Reviews(ctx, pr.Number)
	if err != nil {
		t.Fatal(err)
	}
	var approved, mine bool
	for _, r := range rs {
		if r.Author == login && r.State == ReviewApproved && r.Commit == head && r.Body == "ship it" {
			approved = true
		}
		if r.Author == fx.s.Admin {
			mine = true
			if r.State == ReviewApproved || r.Body != "needs work: tests" || r.Commit != head {
				t.Errorf("fleetwatch's review came back as %+v", r)
			}
		}
	}
	if !approved || !mine {
		t.Fatalf("Reviews = %+v; want %s's approval at %s and fleetwatch's review", rs, login, head)
	}
	cs, err := fx.f.Comments(ctx, pr.Number)
	if err != nil {
		t.Fatal(err)
	}
	var line, whole bool
	for _, c := range cs {
		line = line || (c.Author == login && c.Path == "code.go" && c.Line == 3 && c.Body == "name this better")
		whole = whole || (c.Author == fx.s.Admin && c.Path == "" && c.Body == "landing soon")
	}
	if !line || !whole {
		t.Fatalf("Comments = %+v; want the line comment on code.go:3 and the PR comment", cs)
	}
}

// TestGiteaMeEnqueueErrors: who the token is, no merge queue, and the
// errors a caller acts on.
func TestGiteaMeEnqueueErrors(t *testing.T) {
	t.Parallel()
	fx := newGiteaFix(t)
	ctx := ctxT(t)
	me, err := fx.f.Me(ctx)
	if err != nil || me.Login != fx.s.Admin || me.Scopes != nil {
		t.Fatalf("Me = %+v, %v", me, err)
	}
	if err := fx.f.Enqueue(ctx, 1, fx.base); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "no merge queue") {
		t.Fatalf("Enqueue: %v, want ErrRefused saying there is no merge queue", err)
	}
	if _, err := fx.f.Get(ctx, 9999); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a missing PR: %v, want ErrNotFound", err)
	}
	if _, err := fx.f.Merge(ctx, 9999, fx.base, "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Merge of a missing PR: %v, want ErrNotFound", err)
	}
	// Gitea 1.26 answers 500 here, not 404: an error all the same.
	if err := fx.f.Comment(ctx, 9999, "x"); err == nil {
		t.Fatal("Comment on a missing PR: no error")
	}
	bad, err := newGitea(Conn{URL: fx.s.URL, Repo: fx.repo, Token: "not-a-token", HTTP: httpClient()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Me(ctx); err == nil || strings.Contains(err.Error(), "not-a-token") {
		t.Fatalf("Me with a bad token: %v", err)
	}
	if !strings.HasSuffix(fx.f.Remote(), "/"+fx.repo+".git") || fx.f.Web() != fx.s.URL+"/"+fx.repo || fx.f.Kind() != "gitea" {
		t.Fatalf("Remote %s, Web %s, Kind %s", fx.f.Remote(), fx.f.Web(), fx.f.Kind())
	}
}

// TestGiteaOpen: `kind: gitea` in fleetwatch.yaml's forge section opens
// this client, with the token from token_env.
func TestGiteaOpen(t *testing.T) {
	fx := newGiteaFix(t)
	t.Setenv("FLEETWATCH_TEST_GITEA_TOKEN", fx.s.Token)
	f, err := Open(config.Forge{Kind: config.ForgeGitea, URL: fx.s.URL + "/", Repo: fx.repo, TokenEnv: "FLEETWATCH_TEST_GITEA_TOKEN"})
	if err != nil {
		t.Fatal(err)
	}
	if me, err := f.Me(ctxT(t)); err != nil || me.Login != fx.s.Admin {
		t.Fatalf("Me through Open = %+v, %v", me, err)
	}
	for _, repo := range []string{"", "noslash", "a/b/c", "/x", "x/"} {
		if _, err := newGitea(Conn{URL: fx.s.URL, Repo: repo}); err == nil {
			t.Errorf("newGitea took repo %q", repo)
		}
	}
}

// TestGiteaMergeNotFastForward: when main moved past the PR's base, a
// fast-forward cannot be made and Gitea refuses; in a repository that
// disallows fast-forward-only the merge is a merge commit over the
// pinned head.
func TestGiteaMergeNotFastForward(t *testing.T) {
	t.Parallel()
	fx := newGiteaFix(t)
	ctx := ctxT(t)
	head, pr := fx.featPR(t, ctx)
	fx.w.Git("checkout", "-q", "main")
	moved := fx.w.Commit("other.txt", "other\n", "main moves on")
	fx.w.Git("push", "-q", fx.f.Remote(), "main")
	fx.s.WaitBranch(t, fx.repo, "main", moved)
	_, err := fx.f.Merge(ctx, pr.Number, head, "feat")
	if !errors.Is(err, ErrRefused) || errors.Is(err, ErrHeadMoved) {
		t.Fatalf("fast-forward over a moved main: %v, want ErrRefused", err)
	}
	t.Logf("refusal: %v", err)
	if at := fx.branchAt(t, "main"); at != moved {
		t.Fatalf("main at %s after a refused merge, want %s", at, moved)
	}
	owner, name := repoPath(fx.repo)
	no := false
	if _, _, err := fx.s.Client(t).EditRepo(owner, name, gitea.EditRepoOption{AllowFastForwardOnlyMerge: &no}); err != nil {
		t.Fatal(err)
	}
	at, err := fx.f.Merge(ctx, pr.Number, head, "feat: land it\n\nwith a body")
	if err != nil {
		t.Fatal(err)
	}
	parents := strings.Fields(fx.w.Git("fetch", "-q", fx.f.Remote(), "main") + fx.w.Git("rev-list", "--parents", "-n1", "FETCH_HEAD"))
	if len(parents) != 3 || parents[0] != at || parents[1] != moved || parents[2] != head {
		t.Fatalf("merge commit %s has parents %v, want %s and %s", at, parents, moved, head)
	}
	if msg := fx.w.Git("log", "-1", "--format=%s", "FETCH_HEAD"); msg != "feat: land it" {
		t.Fatalf("merge commit's subject %q", msg)
	}
}

// BenchmarkListHundredPRs: List over 100 open PRs, each with a status on
// its head (two pages of PRs and 100 combined statuses).
func BenchmarkListHundredPRs(b *testing.B) {
	const n = 100
	fx := newGiteaFix(b)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t0 := time.Now()
	heads := make([]string, n)
	for i := range n {
		name := fmt.Sprintf("pr%03d", i)
		fx.w.Git("checkout", "-q", "-B", name, "main")
		heads[i] = fx.w.Commit(name+".txt", name+"\n", name)
	}
	fx.w.Git("push", "-q", fx.f.Remote(), "refs/heads/pr*:refs/heads/pr*")
	fx.s.WaitBranch(b, fx.repo, fmt.Sprintf("pr%03d", n-1), heads[n-1])
	sem := make(chan struct{}, 4)
	errs := make(chan error, n)
	for i := range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			name := fmt.Sprintf("pr%03d", i)
			if _, err := fx.f.Ensure(ctx, NewPR{Head: name, Base: "main", Title: name}); err != nil {
				errs <- err
				return
			}
			errs <- fx.f.SetStatus(ctx, heads[i], Status{Context: "fleetwatch/test", State: StatusSuccess})
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%d PRs with a status each made in %v", n, time.Since(t0).Round(time.Millisecond))
	b.ResetTimer()
	for b.Loop() {
		list, err := fx.f.List(ctx, "main")
		if err != nil || len(list) != n || list[0].Checks != StatusSuccess {
			b.Fatalf("List = %d PRs, %v", len(list), err)
		}
	}
}

// TestGiteaWriter: the owner and a write collaborator may push; a reader,
// a stranger and nobody may not; a writer's token may ask about itself
// but not about others.
func TestGiteaWriter(t *testing.T) {
	t.Parallel()
	fx := newGiteaFix(t)
	ctx := ctxT(t)
	login, _ := reviewer(t, fx)
	reader, stranger := login+"-r", login+"-s"
	readerTok := fx.s.NewUser(t, reader)
	fx.s.NewUser(t, stranger)
	owner, name := repoPath(fx.repo)
	read := gitea.AccessModeRead
	if _, err := fx.s.Client(t).AddCollaborator(owner, name, reader, gitea.AddCollaboratorOption{Permission: &read}); err != nil {
		t.Fatal(err)
	}
	for who, want := range map[string]bool{fx.s.Admin: true, login: true, reader: false, stranger: false, "nobody-here": false, "": false} {
		if got, err := fx.f.Writer(ctx, who); err != nil || got != want {
			t.Errorf("Writer(%q) = %v, %v; want %v", who, got, err, want)
		}
	}
	asReader, err := newGitea(Conn{URL: fx.s.URL, Repo: fx.repo, Token: readerTok, HTTP: httpClient()})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := asReader.Writer(ctx, reader); err != nil || got {
		t.Errorf("a reader asking about itself: %v, %v; want false", got, err)
	}
	if _, err := asReader.Writer(ctx, login); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "needs admin") {
		t.Errorf("a reader asking about another: %v, want ErrRefused saying the token needs admin", err)
	}
}
