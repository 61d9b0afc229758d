package forge

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/config"
)

// The GitHub client's contract, against fixtures from the REST docs
// (testdata/github/README.md names the pages). The scripted forge is an
// Enterprise Server at its URL, so every path starts with /api/v3.

const (
	ghHead  = "6dcb09b5b57875f334f61aebed695e2e4193db5e"
	ghMerge = "e5bd3914e2e596debea16f433f57875b5b90bcd6"
	ghRepo  = "/api/v3/repos/octo/api"
)

func ghServe(t *testing.T, steps ...exchange) (*gitHub, *script) {
	t.Helper()
	s := serve(t, "Authorization", "Bearer tok-gh", "github", steps...)
	f, err := newGitHub(Conn{URL: s.srv.URL, Repo: "octo/api", Token: "tok-gh", HTTP: httpClient()})
	if err != nil {
		t.Fatal(err)
	}
	return f.(*gitHub), s
}

func q(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

func TestGitHubAddresses(t *testing.T) {
	f, err := newGitHub(Conn{Repo: "octo/api", Token: "tok", HTTP: httpClient()})
	if err != nil {
		t.Fatal(err)
	}
	g := f.(*gitHub)
	if got := g.client.BaseURL.String(); got != "https://api.github.com/" {
		t.Errorf("github.com's API is %s", got)
	}
	if g.Web() != "https://github.com/octo/api" || g.Remote() != "https://github.com/octo/api.git" || g.Kind() != "github" {
		t.Errorf("web %s, remote %s, kind %s", g.Web(), g.Remote(), g.Kind())
	}
	cred := base64.StdEncoding.EncodeToString([]byte("x-access-token:tok"))
	if env := strings.Join(g.GitEnv(), "\n"); !strings.Contains(env, "http.https://github.com/.extraHeader") || !strings.Contains(env, "Authorization: Basic "+cred) {
		t.Errorf("git env %q", env)
	}
	if strings.Contains(g.Remote(), "tok") {
		t.Errorf("the token is in the remote %s", g.Remote())
	}
	f, _ = newGitHub(Conn{URL: "https://ghe.example.com", Repo: "octo/api", Token: "tok", HTTP: httpClient()})
	g = f.(*gitHub)
	if g.client.BaseURL.String() != "https://ghe.example.com/api/v3/" || g.client.UploadURL.String() != "https://ghe.example.com/api/uploads/" {
		t.Errorf("an Enterprise Server's API is %s and %s", g.client.BaseURL, g.client.UploadURL)
	}
}

func TestGitHubFindGetList(t *testing.T) {
	g, _ := ghServe(t,
		exchange{method: "GET", path: ghRepo + "/pulls", file: "pulls-find.json",
			query: q("head", "octo:fleetwatch/p-7", "base", "main", "state", "all", "sort", "created", "direction", "desc")},
		exchange{method: "GET", path: ghRepo + "/pulls/7", file: "pull.json"},
		exchange{method: "GET", path: ghRepo + "/commits/" + ghHead + "/status", file: "combined-status.json"},
		exchange{method: "GET", path: ghRepo + "/pulls", file: "pulls-page1.json", query: q("state", "open", "base", "main", "per_page", "100"),
			// The next page is asked of the forge's own API, whatever host the Link names.
			header: http.Header{"Link": {`<http://elsewhere.example/api/v3/repos/octo/api/pulls?page=2>; rel="next", <{srv}/api/v3/repos/octo/api/pulls?page=2>; rel="last"`}}},
		exchange{method: "GET", path: ghRepo + "/pulls", file: "pulls-page2.json", query: q("page", "2", "per_page", "100")},
		exchange{method: "GET", path: ghRepo + "/pulls", raw: "[]", query: q("head", "octo:nope")},
	)
	ctx := context.Background()
	pr, ok, err := g.Find(ctx, "fleetwatch/p-7", "main")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if pr.Number != 7 || pr.State != StateOpen || pr.HeadSHA != ghHead || pr.MergeCommit != "" {
		t.Errorf("Find picked %+v, want the open #7 (not #12 of another head, not the older #3; no merge commit while open)", pr)
	}
	pr, err = g.Get(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	want := PR{Number: 7, State: StateOpen, Title: "Plan fleetwatch/p-7", Head: "fleetwatch/p-7", HeadSHA: ghHead, Base: "main",
		URL: "https://ghe.example.com/octo/api/pull/7", Checks: StatusFailure, Updated: time.Date(2026, 1, 26, 19, 1, 12, 0, time.UTC)}
	if !reflect.DeepEqual(pr, want) {
		t.Errorf("Get:\n got %+v\nwant %+v", pr, want)
	}
	prs, err := g.List(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	var nums []int
	for _, p := range prs {
		nums = append(nums, p.Number)
		if p.Checks != "" {
			t.Errorf("List filled checks: %+v", p)
		}
	}
	if fmt.Sprint(nums) != "[7 8 9]" {
		t.Errorf("List read %v, want both pages: [7 8 9]", nums)
	}
	if _, ok, err := g.Find(ctx, "nope", "main"); ok || err != nil {
		t.Errorf("Find of no PR: %v %v", ok, err)
	}
}

func TestGitHubEnsure(t *testing.T) {
	g, _ := ghServe(t,
		exchange{method: "GET", path: ghRepo + "/pulls", file: "pulls-find.json", query: q("head", "octo:fleetwatch/p-7")},
		exchange{method: "PATCH", path: ghRepo + "/pulls/7", file: "pull-edited.json",
			body: map[string]any{"title": "New title", "body": "New body"}, absent: []string{"base", "state"}},
		exchange{method: "GET", path: ghRepo + "/pulls", raw: "[]", query: q("head", "octo:fleetwatch/p-13")},
		exchange{method: "POST", path: ghRepo + "/pulls", file: "pull-created.json",
			body: map[string]any{"title": "Plan 13", "body": "Body 13", "head": "fleetwatch/p-13", "base": "main"}},
	)
	ctx := context.Background()
	pr, err := g.Ensure(ctx, NewPR{Head: "fleetwatch/p-7", Base: "main", Title: "New title", Body: "New body"})
	if err != nil || pr.Number != 7 {
		t.Fatalf("Ensure of an open PR: %+v %v", pr, err)
	}
	pr, err = g.Ensure(ctx, NewPR{Head: "fleetwatch/p-13", Base: "main", Title: "Plan 13", Body: "Body 13"})
	if err != nil || pr.Number != 13 || pr.State != StateOpen {
		t.Fatalf("Ensure of a new PR: %+v %v", pr, err)
	}
}

func TestGitHubStatusReviewComment(t *testing.T) {
	g, _ := ghServe(t,
		exchange{method: "POST", path: ghRepo + "/statuses/" + ghHead, file: "status.json",
			body: map[string]any{"state": "failure", "context": "fleetwatch/test", "description": strings.Repeat("d", 137) + "...", "target_url": "https://ci.example.com/1"}},
		exchange{method: "POST", path: ghRepo + "/pulls/7/reviews", file: "review.json",
			body: map[string]any{"event": "COMMENT", "commit_id": ghHead, "body": "peer: looks right"}},
		exchange{method: "POST", path: ghRepo + "/pulls/7/reviews", file: "error-422-own.json", status: 422,
			body: map[string]any{"event": "REQUEST_CHANGES", "commit_id": ghHead, "body": "needs work: tests"}},
		exchange{method: "POST", path: ghRepo + "/pulls/7/reviews", file: "review.json",
			body: map[string]any{"event": "COMMENT", "commit_id": ghHead, "body": "Changes requested: needs work: tests"}},
		exchange{method: "POST", path: ghRepo + "/pulls/7/reviews", file: "review.json",
			body: map[string]any{"event": "COMMENT", "body": "no commit"}, absent: []string{"commit_id"}},
		exchange{method: "POST", path: ghRepo + "/issues/7/comments", file: "issue-comment.json",
			body: map[string]any{"body": "fleetwatch: checks passed"}},
	)
	ctx := context.Background()
	if err := g.SetStatus(ctx, ghHead, Status{Context: "fleetwatch/test", State: StatusFailure, Description: strings.Repeat("d", 200), TargetURL: "https://ci.example.com/1"}); err != nil {
		t.Fatal(err)
	}
	if err := g.SetStatus(ctx, ghHead, Status{Context: "fleetwatch/test", State: "approved"}); err == nil {
		t.Error("a status in no state GitHub knows was posted")
	}
	if err := g.Review(ctx, 7, ReviewIn{Commit: ghHead, Body: "peer: looks right"}); err != nil {
		t.Fatal(err)
	}
	if err := g.Review(ctx, 7, ReviewIn{Commit: ghHead, Body: "needs work: tests", RequestChanges: true}); err != nil {
		t.Fatal(err)
	}
	if err := g.Review(ctx, 7, ReviewIn{Body: "no commit"}); err != nil {
		t.Fatal(err)
	}
	if err := g.Comment(ctx, 7, "fleetwatch: checks passed"); err != nil {
		t.Fatal(err)
	}
}

func TestGitHubReviewsComments(t *testing.T) {
	next := http.Header{"Link": {`<{srv}/api/v3/x?page=2>; rel="next"`}}
	g, _ := ghServe(t,
		exchange{method: "GET", path: ghRepo + "/pulls/7/reviews", file: "reviews-page1.json", header: next, query: q("per_page", "100")},
		exchange{method: "GET", path: ghRepo + "/pulls/7/reviews", file: "reviews-page2.json", query: q("page", "2")},
		exchange{method: "GET", path: ghRepo + "/issues/7/comments", file: "issue-comments.json"},
		exchange{method: "GET", path: ghRepo + "/pulls/7/comments", file: "review-comments.json"},
	)
	ctx := context.Background()
	rs, err := g.Reviews(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.Author+":"+r.State)
		if r.Commit != ghHead || r.At.IsZero() {
			t.Errorf("review %+v lost its commit or time", r)
		}
	}
	if want := "[ana:approved bo:changes_requested cy:commented di:dismissed]"; fmt.Sprint(got) != want {
		t.Errorf("Reviews read %v, want %s (the pending draft left out)", got, want)
	}
	cs, err := g.Comments(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, c := range cs {
		got = append(got, fmt.Sprintf("%s:%s:%d:%s", c.Author, c.Path, c.Line, c.Body))
	}
	if want := "[ana::0:Me too bo:file1.txt:2:Great stuff! bo:old.go:9:outdated]"; fmt.Sprint(got) != want {
		t.Errorf("Comments read %v, want %s", got, want)
	}
}

func TestGitHubMe(t *testing.T) {
	g, _ := ghServe(t,
		exchange{method: "GET", path: "/api/v3/user", file: "user.json", header: http.Header{"X-Oauth-Scopes": {"repo, read:org, "}}},
		exchange{method: "GET", path: "/api/v3/user", file: "user.json"},
	)
	u, err := g.Me(context.Background())
	if err != nil || u.Login != "fleet-bot" || fmt.Sprint(u.Scopes) != "[repo read:org]" {
		t.Errorf("Me of a classic token: %+v %v", u, err)
	}
	u, err = g.Me(context.Background())
	if err != nil || u.Scopes != nil {
		t.Errorf("Me of a fine-grained token (no scopes header): %+v %v", u, err)
	}
}

func TestGitHubProtection(t *testing.T) {
	prot, rules := ghRepo+"/branches/main/protection", ghRepo+"/rules/branches/main"
	for _, c := range []struct {
		name  string
		steps []exchange
		want  Protection
	}{
		{"unprotected", []exchange{
			{method: "GET", path: prot, file: "error-not-protected.json", status: 404},
			{method: "GET", path: rules, file: "error-404.json", status: 404},
		}, Protection{PushAllowed: true}},
		{"reviews, checks and rulesets with a merge queue", []exchange{
			{method: "GET", path: prot, file: "protection.json"},
			{method: "GET", path: "/api/v3/user", file: "user.json"},
			{method: "GET", path: rules, file: "rules.json"},
		}, Protection{Protected: true, Approvals: 3, Checks: []string{"fleetwatch/test", "ci/build", "fleetwatch/lint"}, MergeQueue: true}},
		{"a token that may not read the protection", []exchange{
			{method: "GET", path: prot, file: "error-404.json", status: 404},
			{method: "GET", path: ghRepo + "/branches/main", file: "branch.json"},
			{method: "GET", path: rules, raw: "[]"},
		}, Protection{Protected: true, Checks: []string{"ci-test", "linter"}}},
		{"push restricted to others", []exchange{
			{method: "GET", path: prot, file: "protection-restricted.json"},
			{method: "GET", path: "/api/v3/user", file: "user.json"},
			{method: "GET", path: rules, raw: "[]"},
		}, Protection{Protected: true}},
		{"push restricted to the token's user", []exchange{
			{method: "GET", path: prot, raw: `{"restrictions":{"users":[null,{"login":"fleet-bot"}]}}`},
			{method: "GET", path: "/api/v3/user", file: "user.json"},
			{method: "GET", path: rules, raw: "[]"},
		}, Protection{Protected: true, PushAllowed: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, _ := ghServe(t, c.steps...)
			got, err := g.Protection(context.Background(), "main")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestGitHubMerge(t *testing.T) {
	merge := func(status int, file, raw string) exchange {
		return exchange{method: "PUT", path: ghRepo + "/pulls/7/merge", status: status, file: file, raw: raw,
			body: map[string]any{"sha": ghHead, "merge_method": "merge", "commit_message": "land plan 7"}}
	}
	g, _ := ghServe(t,
		merge(0, "merge.json", ""),
		merge(409, "error-409.json", ""),
		merge(405, "error-405.json", ""),
		merge(404, "error-404.json", ""),
		merge(0, "", `{"merged":false,"message":"not now"}`),
		merge(0, "", `{"merged":true,"sha":"../../evil"}`),
	)
	ctx := context.Background()
	sha, err := g.Merge(ctx, 7, ghHead, "land plan 7")
	if err != nil || sha != ghMerge {
		t.Fatalf("Merge: %q %v", sha, err)
	}
	for _, want := range []error{ErrHeadMoved, ErrRefused, ErrNotFound, ErrRefused, ErrRefused} {
		if _, err := g.Merge(ctx, 7, ghHead, "land plan 7"); !errors.Is(err, want) {
			t.Errorf("Merge: %v, want %v", err, want)
		}
	}
	if err := g.Enqueue(ctx, 7, ghHead); !errors.Is(err, ErrRefused) {
		t.Errorf("Enqueue: %v, want ErrRefused (GraphQL-only)", err)
	}
}

func TestGitHubMarkMerged(t *testing.T) {
	defer shortPolls(3)()
	get := func(file, raw string) exchange {
		return exchange{method: "GET", path: ghRepo + "/pulls/7", file: file, raw: raw}
	}
	g, _ := ghServe(t, get("pull.json", ""), get("pull-merged.json", ""),
		get("pull.json", ""), get("pull.json", ""), get("pull.json", ""),
		get("", `{"number": 7, "state": "closed"}`))
	if err := g.MarkMerged(context.Background(), 7, ghHead); err != nil {
		t.Fatal(err)
	}
	if err := g.MarkMerged(context.Background(), 7, ghHead); !errors.Is(err, ErrRefused) {
		t.Errorf("MarkMerged of a PR that stays open: %v, want ErrRefused", err)
	}
	if err := g.MarkMerged(context.Background(), 7, ghHead); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "closed without a merge") {
		t.Errorf("MarkMerged of a PR closed by hand: %v, want ErrRefused at the first look", err)
	}
}

// shortPolls makes MarkMerged look n times, quickly, until undone.
func shortPolls(n int) func() {
	polls, wait := mergedPolls, mergedWait
	mergedPolls, mergedWait = n, time.Millisecond
	return func() { mergedPolls, mergedWait = polls, wait }
}

// Every byte from the forge is hostile: fields left out, nulls, a body
// without end, a redirect to another host, pages without end.
func TestGitHubHostileAnswers(t *testing.T) {
	g, _ := ghServe(t,
		exchange{method: "GET", path: ghRepo + "/pulls", raw: `[{}, null, {"number": 5, "head": null}]`},
		exchange{method: "GET", path: ghRepo + "/pulls/7", raw: `{}`},
		exchange{method: "GET", path: ghRepo + "/pulls/7", raw: `{"number": 7, "head": {"sha": null}}`},
		exchange{method: "GET", path: ghRepo + "/pulls/7/reviews", raw: `[null, {}, {"state": "APPROVED"}, {"state": "APPROVED", "user": {"login": "ana"}}]`},
		exchange{method: "GET", path: ghRepo + "/issues/7/comments", raw: `[null, {}]`},
		exchange{method: "GET", path: ghRepo + "/pulls/7/comments", raw: `[null]`},
		exchange{method: "GET", path: ghRepo + "/branches/main/protection", raw: `{"required_status_checks": {"checks": [null]}, "restrictions": {}}`},
		exchange{method: "GET", path: "/api/v3/user", raw: `{"login": "fleet-bot"}`},
		exchange{method: "GET", path: ghRepo + "/rules/branches/main", raw: `[{"type": "pull_request"}, {"type": "merge_queue"}]`},
		exchange{method: "PUT", path: ghRepo + "/pulls/7/merge", raw: `{}`},
		exchange{method: "GET", path: "/api/v3/user", raw: `{}`},
	)
	ctx := context.Background()
	if prs, err := g.List(ctx, "main"); err != nil || len(prs) != 0 {
		t.Errorf("List of PRs without state or base: %+v %v", prs, err)
	}
	if _, err := g.Get(ctx, 7); err == nil {
		t.Error("Get took an answer with no number")
	}
	if pr, err := g.Get(ctx, 7); err != nil || pr.State != StateClosed || pr.Checks != "" {
		t.Errorf("Get of a PR with no state: %+v %v", pr, err)
	}
	if rs, err := g.Reviews(ctx, 7); err != nil || len(rs) != 1 || rs[0].Author != "ana" {
		t.Errorf("Reviews of nulls and authorless approvals: %+v %v", rs, err)
	}
	if _, err := g.Comments(ctx, 7); err != nil {
		t.Error(err)
	}
	if p, err := g.Protection(ctx, "main"); err != nil || p.PushAllowed || !p.MergeQueue {
		t.Errorf("Protection of a sparse answer: %+v %v", p, err)
	}
	if _, err := g.Merge(ctx, 7, ghHead, ""); !errors.Is(err, ErrRefused) {
		t.Errorf("Merge answered {}: %v, want ErrRefused", err)
	}
	if _, err := g.Me(ctx); err == nil {
		t.Error("Me took a user with no login")
	}
}

func TestGitHubBodyWithoutEnd(t *testing.T) {
	defer smallAnswers(1 << 20)()
	srv := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.Copy(w, &endless{})
	})
	f, _ := newGitHub(Conn{URL: srv.URL, Repo: "octo/api", Token: "tok", HTTP: httpClient()})
	start := time.Now()
	_, err := f.List(context.Background(), "main")
	if !errors.Is(err, errAnswerTooBig) {
		t.Errorf("List of a body without end: %v, want errAnswerTooBig", err)
	}
	t.Logf("stopped after %d bytes in %v", answerCap, time.Since(start))
}

func TestGitHubRedirectElsewhereKeepsTheToken(t *testing.T) {
	away := newElsewhere(t)
	srv := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, away.srv.URL+r.URL.Path, http.StatusFound)
	})
	f, _ := newGitHub(Conn{URL: srv.URL, Repo: "octo/api", Token: "tok", HTTP: httpClient()})
	if _, err := f.Get(context.Background(), 7); err == nil {
		t.Error("Get followed a redirect to another host")
	}
	if _, err := f.Merge(context.Background(), 7, ghHead, ""); err == nil {
		t.Error("Merge followed a redirect to another host")
	}
	away.mu.Lock()
	defer away.mu.Unlock()
	if away.hits != 0 || len(away.tokens) != 0 {
		t.Errorf("the other host got %d requests, tokens %q", away.hits, away.tokens)
	}
}

func TestGitHubPagesWithoutEnd(t *testing.T) {
	calls := 0
	srv := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		calls++
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		w.Header().Set("Link", fmt.Sprintf(`<%s/api/v3/x?page=%d>; rel="next"`, "http://"+r.Host, page+1))
		w.Write([]byte(`[]`))
	})
	f, _ := newGitHub(Conn{URL: srv.URL, Repo: "octo/api", Token: "tok", HTTP: httpClient()})
	if _, err := f.List(context.Background(), "main"); !errors.Is(err, ErrRefused) || calls != pageCap {
		t.Errorf("List of pages without end: %v after %d calls, want ErrRefused after %d", err, calls, pageCap)
	}
	calls = 0
	if _, err := f.Reviews(context.Background(), 7); !errors.Is(err, ErrRefused) || calls != pageCap {
		t.Errorf("Reviews of pages without end: %v after %d calls", err, calls)
	}
}

// 100 open PRs list in one call, well within the second the cockpit has.
func TestGitHubListsAHundredQuickly(t *testing.T) {
	var page strings.Builder
	page.WriteString("[")
	for i := range 100 {
		if i > 0 {
			page.WriteString(",")
		}
		fmt.Fprintf(&page, `{"number":%d,"state":"open","title":"Plan %d","head":{"ref":"fleetwatch/p-%d","sha":"%s"},"base":{"ref":"main"}}`, i+1, i+1, i+1, ghHead)
	}
	page.WriteString("]")
	g, _ := ghServe(t, exchange{method: "GET", path: ghRepo + "/pulls", raw: page.String(), query: q("per_page", "100")})
	start := time.Now()
	prs, err := g.List(context.Background(), "main")
	took := time.Since(start)
	if err != nil || len(prs) != 100 || took > time.Second {
		t.Errorf("List of 100: %d PRs, %v, in %v", len(prs), err, took)
	}
	t.Logf("100 PRs in %v", took)
}

func TestGitHubWriter(t *testing.T) {
	perm := func(login string) string { return ghRepo + "/collaborators/" + login + "/permission" }
	g, _ := ghServe(t,
		exchange{method: "GET", path: perm("ana"), file: "permission-write.json"},
		exchange{method: "GET", path: perm("bo"), file: "permission-read.json"},
		exchange{method: "GET", path: perm("ghost"), file: "error-404.json", status: 404},
		exchange{method: "GET", path: perm("dependabot%5Bbot%5D"), file: "error-403.json", status: 403},
	)
	ctx := context.Background()
	for _, c := range []struct {
		login string
		want  bool
		err   string
	}{
		{"ana", true, ""}, {"bo", false, ""}, {"ghost", false, ""},
		{"dependabot[bot]", false, "needs push access"},
		// Not a login: never put in a path, never asked.
		{"../../user", false, ""}, {"", false, ""},
	} {
		ok, err := g.Writer(ctx, c.login)
		if ok != c.want || (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("Writer(%q) = %v, %v; want %v, %q", c.login, ok, err, c.want, c.err)
		}
	}
}

// Open finds the GitHub client by its kind, github.com by default.
func TestOpenGitHub(t *testing.T) {
	t.Setenv("FW_GH_TOKEN", "tok")
	f, err := Open(config.Forge{Kind: config.ForgeGitHub, Repo: "octo/api", TokenEnv: "FW_GH_TOKEN"})
	if err != nil || f.Kind() != "github" || f.Web() != "https://github.com/octo/api" {
		t.Fatalf("%v %v", f, err)
	}
}
