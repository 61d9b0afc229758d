package forge

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/config"
)

// The GitLab client's contract, against fixtures from the REST docs
// (testdata/gitlab/README.md names the pages). The project is a nested
// group's, so its id in every path is the escaped "team/sub/api".

const (
	glHead  = "8888888888888888888888888888888888888888"
	glOld   = "1111111111111111111111111111111111111111"
	glMerge = "af5b33a1d4cbea7a8b1e3a4d1e5e2f7a9b8c6d5e"
	glProj  = "/api/v4/projects/team%2Fsub%2Fapi"
)

func glServe(t *testing.T, steps ...exchange) (*gitLab, *script) {
	t.Helper()
	s := serve(t, "Private-Token", "tok-gl", "gitlab", steps...)
	f, err := newGitLab(Conn{URL: s.srv.URL, Repo: "team/sub/api", Token: "tok-gl", HTTP: httpClient()})
	if err != nil {
		t.Fatal(err)
	}
	return f.(*gitLab), s
}

func TestGitLabAddresses(t *testing.T) {
	f, err := newGitLab(Conn{URL: "https://gitlab.example.com", Repo: "team/sub/api", Token: "tok", HTTP: httpClient()})
	if err != nil {
		t.Fatal(err)
	}
	g := f.(*gitLab)
	if got := g.client.BaseURL().String(); got != "https://gitlab.example.com/api/v4/" {
		t.Errorf("the API is at %s", got)
	}
	if g.Web() != "https://gitlab.example.com/team/sub/api" || g.Remote() != "https://gitlab.example.com/team/sub/api.git" || g.Kind() != "gitlab" {
		t.Errorf("web %s, remote %s, kind %s", g.Web(), g.Remote(), g.Kind())
	}
	cred := base64.StdEncoding.EncodeToString([]byte("oauth2:tok"))
	if env := strings.Join(g.GitEnv(), "\n"); !strings.Contains(env, "http.https://gitlab.example.com/.extraHeader") || !strings.Contains(env, "Authorization: Basic "+cred) {
		t.Errorf("git env %q", env)
	}
}

func TestGitLabFindGetList(t *testing.T) {
	mrs := glProj + "/merge_requests"
	g, _ := glServe(t,
		exchange{method: "GET", path: mrs, file: "mrs-find.json",
			query: q("source_branch", "fleetwatch/p-7", "target_branch", "main", "order_by", "created_at", "sort", "desc")},
		exchange{method: "GET", path: mrs + "/7", file: "mr.json"},
		exchange{method: "GET", path: mrs + "/7", file: "mr-old-pipeline.json"},
		exchange{method: "GET", path: mrs, file: "mrs-page1.json", query: q("state", "opened", "target_branch", "main", "per_page", "100"),
			header: http.Header{"X-Next-Page": {"2"}, "X-Page": {"1"}, "X-Total-Pages": {"2"}}},
		exchange{method: "GET", path: mrs, file: "mrs-page2.json", query: q("page", "2", "state", "opened"),
			header: http.Header{"X-Next-Page": {""}, "X-Page": {"2"}, "X-Total-Pages": {"2"}}},
	)
	ctx := context.Background()
	pr, ok, err := g.Find(ctx, "fleetwatch/p-7", "main")
	if err != nil || !ok || pr.Number != 7 || pr.State != StateOpen {
		t.Fatalf("Find picked %+v %v %v, want the open !7 (not !12 of another branch, not the older !3)", pr, ok, err)
	}
	pr, err = g.Get(ctx, 7)
	want := PR{Number: 7, State: StateOpen, Title: "Plan fleetwatch/p-7", Head: "fleetwatch/p-7", HeadSHA: glHead, Base: "main",
		URL: "https://gitlab.example.com/team/sub/api/-/merge_requests/7", Checks: StatusPending, Updated: time.Date(2026, 1, 26, 19, 1, 12, 0, time.UTC)}
	if err != nil || !reflect.DeepEqual(pr, want) {
		t.Errorf("Get:\n got %+v %v\nwant %+v", pr, err, want)
	}
	if pr, err = g.Get(ctx, 7); err != nil || pr.Checks != "" {
		t.Errorf("Get took a pipeline on another commit as the head's checks: %+v %v", pr, err)
	}
	prs, err := g.List(ctx, "main")
	var nums []int
	for _, p := range prs {
		nums = append(nums, p.Number)
	}
	if err != nil || fmt.Sprint(nums) != "[7 8 9]" {
		t.Errorf("List read %v %v, want both pages: [7 8 9]", nums, err)
	}
}

func TestGitLabEnsure(t *testing.T) {
	mrs := glProj + "/merge_requests"
	g, _ := glServe(t,
		exchange{method: "GET", path: mrs, file: "mrs-find.json", query: q("source_branch", "fleetwatch/p-7")},
		exchange{method: "PUT", path: mrs + "/7", file: "mr-updated.json",
			body: map[string]any{"title": "New title", "description": "New body"}, absent: []string{"target_branch", "state_event"}},
		exchange{method: "GET", path: mrs, raw: "[]", query: q("source_branch", "fleetwatch/p-13")},
		exchange{method: "POST", path: mrs, file: "mr-created.json",
			body: map[string]any{"title": "Plan 13", "description": "Body 13", "source_branch": "fleetwatch/p-13", "target_branch": "main"}},
	)
	ctx := context.Background()
	if pr, err := g.Ensure(ctx, NewPR{Head: "fleetwatch/p-7", Base: "main", Title: "New title", Body: "New body"}); err != nil || pr.Number != 7 {
		t.Errorf("Ensure of an open MR: %+v %v", pr, err)
	}
	if pr, err := g.Ensure(ctx, NewPR{Head: "fleetwatch/p-13", Base: "main", Title: "Plan 13", Body: "Body 13"}); err != nil || pr.Number != 13 {
		t.Errorf("Ensure of a new MR: %+v %v", pr, err)
	}
}

func TestGitLabStatusReviewComment(t *testing.T) {
	status := func(state string) exchange {
		return exchange{method: "POST", path: glProj + "/statuses/" + glHead, file: "status.json",
			body: map[string]any{"state": state, "name": "fleetwatch/test", "description": "2 of 40 failed", "target_url": "https://ci.example.com/1"}}
	}
	g, _ := glServe(t,
		status("failed"), status("failed"), status("pending"), status("success"),
		exchange{method: "POST", path: glProj + "/merge_requests/7/discussions", file: "discussion.json",
			body: map[string]any{"body": "Changes requested: needs work: tests", "commit_id": glHead}},
		exchange{method: "POST", path: glProj + "/merge_requests/7/discussions", file: "discussion.json",
			body: map[string]any{"body": "peer: looks right", "commit_id": glHead}},
		exchange{method: "POST", path: glProj + "/merge_requests/7/notes", file: "note.json",
			body: map[string]any{"body": "fleetwatch: checks passed"}},
	)
	ctx := context.Background()
	for _, st := range []string{StatusFailure, StatusError, StatusPending, StatusSuccess} {
		if err := g.SetStatus(ctx, glHead, Status{Context: "fleetwatch/test", State: st, Description: "2 of 40 failed", TargetURL: "https://ci.example.com/1"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.SetStatus(ctx, glHead, Status{Context: "fleetwatch/test", State: "approved"}); err == nil {
		t.Error("a status in no known state was posted")
	}
	if err := g.Review(ctx, 7, ReviewIn{Commit: glHead, Body: "needs work: tests", RequestChanges: true}); err != nil {
		t.Fatal(err)
	}
	if err := g.Review(ctx, 7, ReviewIn{Commit: glHead, Body: "peer: looks right"}); err != nil {
		t.Fatal(err)
	}
	if err := g.Comment(ctx, 7, "fleetwatch: checks passed"); err != nil {
		t.Fatal(err)
	}
}

func TestGitLabReviewsComments(t *testing.T) {
	mr := glProj + "/merge_requests/7"
	g, _ := glServe(t,
		exchange{method: "GET", path: mr + "/approvals", file: "approvals.json"},
		exchange{method: "GET", path: mr + "/versions", file: "versions.json"},
		exchange{method: "GET", path: mr + "/approvals", file: "approvals-none.json"},
		exchange{method: "GET", path: mr + "/notes", file: "notes-page1.json", header: http.Header{"X-Next-Page": {"2"}}},
		exchange{method: "GET", path: mr + "/notes", file: "notes-page2.json", query: q("page", "2")},
	)
	ctx := context.Background()
	rs, err := g.Reviews(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.Author+":"+r.State+":"+r.Commit)
	}
	// ana approved before the last push, bo after it, cy at no known time.
	if want := fmt.Sprintf("[ana:approved:%s bo:approved:%s cy:approved:]", glOld, glHead); fmt.Sprint(got) != want {
		t.Errorf("Reviews read %v\nwant %s", got, want)
	}
	if rs, err := g.Reviews(ctx, 7); err != nil || len(rs) != 0 {
		t.Errorf("Reviews with no approvals: %+v %v", rs, err)
	}
	cs, err := g.Comments(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, c := range cs {
		got = append(got, fmt.Sprintf("%s:%s:%d:%s", c.Author, c.Path, c.Line, c.Body))
	}
	if want := "[ana::0:LGTM, one question bo:main.go:18:rename this cy:old.go:4:why was this removed?]"; fmt.Sprint(got) != want {
		t.Errorf("Comments read %v\nwant %s (the system note left out)", got, want)
	}
}

func TestGitLabMe(t *testing.T) {
	g, _ := glServe(t,
		exchange{method: "GET", path: "/api/v4/user", file: "user.json"},
		exchange{method: "GET", path: "/api/v4/personal_access_tokens/self", file: "pat-self.json"},
		exchange{method: "GET", path: "/api/v4/user", file: "user.json"},
		exchange{method: "GET", path: "/api/v4/personal_access_tokens/self", status: 401, raw: `{"message":"401 Unauthorized"}`},
	)
	if u, err := g.Me(context.Background()); err != nil || u.Login != "fleet-bot" || fmt.Sprint(u.Scopes) != "[api read_repository]" {
		t.Errorf("Me of a personal token: %+v %v", u, err)
	}
	if u, err := g.Me(context.Background()); err != nil || u.Login != "fleet-bot" || u.Scopes != nil {
		t.Errorf("Me of a token that cannot read itself: %+v %v", u, err)
	}
}

func TestGitLabProtection(t *testing.T) {
	branch, rules := glProj+"/protected_branches/main", glProj+"/approval_rules"
	for _, c := range []struct {
		name  string
		steps []exchange
		want  Protection
	}{
		{"a maintainer on a protected branch with a merge train", []exchange{
			{method: "GET", path: glProj, file: "project-maintainer.json"},
			{method: "GET", path: branch, file: "protected-branch.json"},
			{method: "GET", path: "/api/v4/user", file: "user.json"},
			{method: "GET", path: rules, file: "approval-rules.json"},
		}, Protection{Protected: true, PushAllowed: true, Approvals: 2, MergeQueue: true}},
		{"a developer on a branch only maintainers push to", []exchange{
			{method: "GET", path: glProj, file: "project-developer.json"},
			{method: "GET", path: branch, file: "protected-branch.json"},
			{method: "GET", path: "/api/v4/user", file: "user.json"},
			{method: "GET", path: rules, raw: "[]"},
		}, Protection{Protected: true}},
		{"a developer on an unprotected branch of a Free project", []exchange{
			{method: "GET", path: glProj, file: "project-developer.json"},
			{method: "GET", path: branch, file: "error-branch-404.json", status: 404},
			{method: "GET", path: rules, status: 403, raw: `{"message":"403 Forbidden"}`},
		}, Protection{PushAllowed: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, _ := glServe(t, c.steps...)
			got, err := g.Protection(context.Background(), "main")
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v %v\nwant %+v", got, err, c.want)
			}
		})
	}
}

func TestGitLabMerge(t *testing.T) {
	merge := func(status int, file string) exchange {
		return exchange{method: "PUT", path: glProj + "/merge_requests/7/merge", status: status, file: file,
			body: map[string]any{"sha": glHead, "merge_commit_message": "land plan 7"}, absent: []string{"auto_merge", "squash"}}
	}
	g, _ := glServe(t,
		merge(0, "mr-merged.json"),
		merge(0, "mr-merged-ff.json"),
		merge(409, "error-409.json"),
		merge(405, "error-405.json"),
		merge(406, "error-406.json"),
		merge(422, "error-422.json"),
		merge(404, "error-404.json"),
		merge(0, "mr.json"),
	)
	ctx := context.Background()
	if sha, err := g.Merge(ctx, 7, glHead, "land plan 7"); err != nil || sha != glMerge {
		t.Errorf("Merge: %q %v, want the merge commit", sha, err)
	}
	if sha, err := g.Merge(ctx, 7, glHead, "land plan 7"); err != nil || sha != glHead {
		t.Errorf("Merge by fast-forward: %q %v, want the head", sha, err)
	}
	for _, want := range []error{ErrHeadMoved, ErrRefused, ErrRefused, ErrRefused, ErrNotFound, ErrRefused} {
		if _, err := g.Merge(ctx, 7, glHead, "land plan 7"); !errors.Is(err, want) {
			t.Errorf("Merge: %v, want %v", err, want)
		}
	}
}

func TestGitLabEnqueue(t *testing.T) {
	train := func(status int, file string) exchange {
		return exchange{method: "POST", path: glProj + "/merge_trains/merge_requests/7", status: status, file: file,
			body: map[string]any{"sha": glHead, "auto_merge": true}}
	}
	g, _ := glServe(t,
		train(0, "merge-train.json"),
		train(400, "error-400-trains.json"),
		exchange{method: "PUT", path: glProj + "/merge_requests/7/merge", file: "mr.json", body: map[string]any{"sha": glHead, "auto_merge": true}},
		train(409, "error-409.json"),
	)
	ctx := context.Background()
	if err := g.Enqueue(ctx, 7, glHead); err != nil {
		t.Errorf("Enqueue on a train: %v", err)
	}
	if err := g.Enqueue(ctx, 7, glHead); err != nil {
		t.Errorf("Enqueue where there are no trains (auto-merge): %v", err)
	}
	if err := g.Enqueue(ctx, 7, glHead); !errors.Is(err, ErrHeadMoved) {
		t.Errorf("Enqueue of a moved head: %v, want ErrHeadMoved", err)
	}
}

func TestGitLabMarkMerged(t *testing.T) {
	defer shortPolls(2)()
	get := func(file string) exchange {
		return exchange{method: "GET", path: glProj + "/merge_requests/7", file: file}
	}
	g, _ := glServe(t, get("mr.json"), get("mr-merged.json"), get("mr.json"), get("mr.json"))
	if err := g.MarkMerged(context.Background(), 7, glHead); err != nil {
		t.Fatal(err)
	}
	if err := g.MarkMerged(context.Background(), 7, glHead); !errors.Is(err, ErrRefused) {
		t.Errorf("MarkMerged of an MR that stays open: %v, want ErrRefused", err)
	}
}

func TestGitLabHostileAnswers(t *testing.T) {
	mr := glProj + "/merge_requests/7"
	g, _ := glServe(t,
		exchange{method: "GET", path: glProj + "/merge_requests", raw: `[{}, {"iid": 5, "state": "weird", "target_branch": "main"}]`},
		exchange{method: "GET", path: glProj + "/merge_requests", raw: `[{}, null]`},
		exchange{method: "GET", path: mr, raw: `null`},
		exchange{method: "GET", path: mr, raw: `{"iid": 7, "head_pipeline": null}`},
		exchange{method: "GET", path: mr + "/approvals", raw: `{"approved_by": [null, {}, {"user": null}, {"user": {"username": "ana"}, "approved_at": "2026-01-26T19:00:00Z"}]}`},
		exchange{method: "GET", path: mr + "/versions", raw: `[null, {}, {"head_commit_sha": "../evil", "created_at": "2026-01-26T18:00:00Z"}]`},
		exchange{method: "GET", path: mr + "/notes", raw: `[null, {}, {"position": {}}]`},
		exchange{method: "PUT", path: mr + "/merge", raw: `{"state": "merged"}`},
		exchange{method: "GET", path: "/api/v4/user", raw: `null`},
	)
	ctx := context.Background()
	if prs, err := g.List(ctx, "main"); err != nil || len(prs) != 0 {
		t.Errorf("List of MRs without state or branch: %+v %v", prs, err)
	}
	if _, err := g.List(ctx, "main"); err == nil {
		t.Error("List took a null MR")
	}
	if _, err := g.Get(ctx, 7); err == nil {
		t.Error("Get took a null answer")
	}
	if pr, err := g.Get(ctx, 7); err != nil || pr.State != StateClosed {
		t.Errorf("Get of an MR with no state: %+v %v", pr, err)
	}
	if rs, err := g.Reviews(ctx, 7); err != nil || len(rs) != 1 || rs[0].Commit != "" {
		t.Errorf("Reviews of nulls and a version with no commit: %+v %v", rs, err)
	}
	if _, err := g.Comments(ctx, 7); err != nil {
		t.Error(err)
	}
	if _, err := g.Merge(ctx, 7, glHead, ""); err == nil {
		t.Error("Merge took a merged answer that names no commit")
	}
	if _, err := g.Me(ctx); err == nil {
		t.Error("Me took a null user")
	}
}

func TestGitLabBodyWithoutEnd(t *testing.T) {
	defer smallAnswers(1 << 20)()
	srv := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.Copy(w, &endless{})
	})
	f, _ := newGitLab(Conn{URL: srv.URL, Repo: "team/sub/api", Token: "tok", HTTP: httpClient()})
	if _, err := f.List(context.Background(), "main"); !errors.Is(err, errAnswerTooBig) {
		t.Errorf("List of a body without end: %v, want errAnswerTooBig", err)
	}
	// An error's body is read whole by client-go: bounded all the same.
	srv = hostile(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		io.Copy(w, &endless{})
	})
	f, _ = newGitLab(Conn{URL: srv.URL, Repo: "team/sub/api", Token: "tok", HTTP: httpClient()})
	if _, err := f.Get(context.Background(), 7); err == nil || len(err.Error()) > 400 {
		t.Errorf("Get of an endless error: %.400v", err)
	}
}

func TestGitLabRedirectElsewhereKeepsTheToken(t *testing.T) {
	away := newElsewhere(t)
	srv := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, away.srv.URL+r.URL.Path, http.StatusTemporaryRedirect)
	})
	f, _ := newGitLab(Conn{URL: srv.URL, Repo: "team/sub/api", Token: "tok", HTTP: httpClient()})
	if _, err := f.Get(context.Background(), 7); err == nil {
		t.Error("Get followed a redirect to another host")
	}
	if _, err := f.Merge(context.Background(), 7, glHead, ""); err == nil {
		t.Error("Merge followed a redirect to another host")
	}
	away.mu.Lock()
	defer away.mu.Unlock()
	if away.hits != 0 || len(away.tokens) != 0 {
		t.Errorf("the other host got %d requests, tokens %q", away.hits, away.tokens)
	}
}

func TestGitLabPagesWithoutEnd(t *testing.T) {
	calls := 0
	srv := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		calls++
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		w.Header().Set("X-Next-Page", strconv.Itoa(page+1))
		w.Write([]byte(`[]`))
	})
	f, _ := newGitLab(Conn{URL: srv.URL, Repo: "team/sub/api", Token: "tok", HTTP: httpClient()})
	if _, err := f.List(context.Background(), "main"); !errors.Is(err, ErrRefused) || calls != pageCap {
		t.Errorf("List of pages without end: %v after %d calls, want ErrRefused after %d", err, calls, pageCap)
	}
	calls = 0
	if _, err := f.Comments(context.Background(), 7); !errors.Is(err, ErrRefused) || calls != pageCap {
		t.Errorf("Comments of pages without end: %v after %d calls", err, calls)
	}
}

func TestGitLabWriter(t *testing.T) {
	users := func(login, file, raw string) exchange {
		return exchange{method: "GET", path: "/api/v4/users", query: q("username", login), file: file, raw: raw}
	}
	member := glProj + "/members/all/11"
	g, _ := glServe(t,
		users("ana", "users-ana.json", ""), exchange{method: "GET", path: member, file: "member-developer.json"},
		users("ana", "users-ana.json", ""), exchange{method: "GET", path: member, file: "member-reporter.json"},
		users("ana", "users-ana.json", ""), exchange{method: "GET", path: member, file: "error-404.json", status: 404},
		users("ghost", "", "[]"),
		users("ana", "", `[null, {"id": 12, "username": "anabel"}]`),
	)
	ctx := context.Background()
	for i, want := range []bool{true, false, false} {
		if ok, err := g.Writer(ctx, "ana"); ok != want || err != nil {
			t.Errorf("Writer #%d: %v %v, want %v", i, ok, err, want)
		}
	}
	if ok, err := g.Writer(ctx, "ghost"); ok || err != nil {
		t.Errorf("Writer of an unknown login: %v %v", ok, err)
	}
	if ok, err := g.Writer(ctx, "ana"); ok || err != nil {
		t.Errorf("Writer took another user for ana: %v %v", ok, err)
	}
}

// Open finds the GitLab client by its kind.
func TestOpenGitLab(t *testing.T) {
	t.Setenv("FW_GL_TOKEN", "tok")
	f, err := Open(config.Forge{Kind: config.ForgeGitLab, URL: "https://gitlab.example.com/", Repo: "team/sub/api", TokenEnv: "FW_GL_TOKEN"})
	if err != nil || f.Kind() != "gitlab" || f.Remote() != "https://gitlab.example.com/team/sub/api.git" {
		t.Fatalf("%v %v", f, err)
	}
}
