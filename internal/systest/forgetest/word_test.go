package forgetest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"

	"github.com/fleetwatch/fleetwatch/internal/systest/landkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/giteatest"
)

// prJSON is the pr object of queue list --json.
type prJSON struct {
	Number   int    `json:"number"`
	State    string `json:"state"`
	Comments []struct {
		Author string `json:"author"`
		Body   string `json:"body"`
	} `json:"comments"`
}

func listedPR(t *testing.T, g *giteatest.Server, dir string) *prJSON {
	t.Helper()
	r := run(t, g, dir, "queue", "list", "--json")
	fwtest.Want(t, r, 0)
	var l struct {
		Items []struct {
			Slug string  `json:"slug"`
			PR   *prJSON `json:"pr"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &l); err != nil {
		t.Fatal(err)
	}
	for _, it := range l.Items {
		if it.Slug == "x" {
			return it.PR
		}
	}
	return nil
}

// A person's comment on the forge waits in the inbox (the PR record the
// faces read); fleetwatch's own posts do not. needs-work reaches the PR
// as a review, and the next run's PR is the same PR, brought up to date.
func TestTheForgesWordComesInAndOurs(t *testing.T) {
	t.Parallel()
	g := giteatest.Shared(t)
	repo := g.CreateRepo(t, g.Admin, "words")
	owner, name, _ := strings.Cut(repo, "/")
	dir, rec := forgeProject(t, g, repo, "queue")
	pr, _ := toReview(t, g, dir, rec, repo)
	login := "bea-" + name
	bea := g.NewUser(t, login)
	g.Collaborate(t, repo, login)
	if _, _, err := g.ClientAs(t, bea).CreateIssueComment(owner, name, int64(pr.Number), gitea.CreateIssueCommentOption{Body: "why a new file?"}); err != nil {
		t.Fatal(err)
	}
	fwtest.Want(t, run(t, g, dir, "queue", "sync"), 0)
	got := listedPR(t, g, dir)
	if got == nil || got.Number != pr.Number || len(got.Comments) != 1 || got.Comments[0].Author != login || got.Comments[0].Body != "why a new file?" {
		t.Fatalf("the listing's PR: %+v", got)
	}
	fwtest.Want(t, run(t, g, dir, "queue", "sync"), 0)
	if again := listedPR(t, g, dir); len(again.Comments) != 1 {
		t.Fatalf("the comment came in twice: %+v", again)
	}

	fwtest.Want(t, run(t, g, dir, "review", "x", "--needs-work", "split the change in two"), 0)
	revs, _, err := g.Client(t).ListPullReviews(owner, name, int64(pr.Number), gitea.ListPullReviewsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var said bool
	for _, r := range revs {
		said = said || strings.Contains(r.Body, "split the change in two")
	}
	if !said {
		t.Fatalf("the needs-work note is not on the PR: %+v", revs)
	}
	// The next run works the plan again: the same PR, at the new tip.
	fwtest.Want(t, run(t, g, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "mid-2"), 0)
	tip := fwtest.GitOut(t, dir, "rev-parse", "feature/x")
	if next := readRecord(t, dir, "x"); next.Number != pr.Number || next.Tip != tip {
		t.Fatalf("after the second run: %+v, want #%d at %s", next, pr.Number, tip)
	}
	open, _, err := g.Client(t).ListRepoPullRequests(owner, name, gitea.ListPullRequestsOptions{State: gitea.StateAll})
	if err != nil || len(open) != 1 || open[0].Head.Sha != tip {
		t.Fatalf("PRs on the forge: %d (%v)", len(open), err)
	}
}

// A PR closed by hand on the forge is recorded, never reopened, and the
// queue refuses to land it.
func TestAPRClosedOnTheForgeIsNotFought(t *testing.T) {
	t.Parallel()
	g := giteatest.Shared(t)
	repo, dir, pr, _ := queued(t, g, "closed", "queue", nil)
	owner, name, _ := strings.Cut(repo, "/")
	closed := gitea.StateClosed
	if _, _, err := g.Client(t).EditPullRequest(owner, name, int64(pr.Number), gitea.EditPullRequestOption{State: &closed}); err != nil {
		t.Fatal(err)
	}
	r := run(t, g, dir, "queue", "sync")
	fwtest.Want(t, r, 0)
	if !strings.Contains(r.Stdout, "was closed on the forge") {
		t.Errorf("queue sync said:\n%s", r.Stdout)
	}
	before := fwtest.GitOut(t, dir, "rev-parse", "main")
	r = run(t, g, dir, "queue", "land", "--yes")
	if r.Code != 2 || !strings.Contains(r.Stderr, "was closed on the forge") {
		t.Fatalf("land: exit %d\n%s", r.Code, r.Stderr)
	}
	if now := fwtest.GitOut(t, dir, "rev-parse", "main"); now != before {
		t.Error("main moved")
	}
	p, _, err := g.Client(t).GetPullRequest(owner, name, int64(pr.Number))
	if err != nil || p.State != gitea.StateClosed || p.HasMerged {
		t.Fatalf("the PR: %+v (%v)", p, err)
	}
}

// The base moved on the forge (somebody else's landing) after the
// candidate was approved: the queue follows it, builds again and lands.
func TestBaseMovedOnTheForgeIsFollowed(t *testing.T) {
	t.Parallel()
	g := giteatest.Shared(t)
	repo, dir, pr, tip := queued(t, g, "base-moved", "queue", nil)
	w := giteatest.NewWork(t)
	w.Git("fetch", "-q", g.GitURL(repo), "main")
	w.Git("checkout", "-q", "FETCH_HEAD")
	other := w.Commit("other.txt", "landed elsewhere\n", "another change")
	w.Git("push", "-q", g.GitURL(repo), "HEAD:refs/heads/main")
	g.WaitBranch(t, repo, "main", other)
	r := run(t, g, dir, "queue", "land", "--yes")
	fwtest.Want(t, r, 0)
	if !strings.Contains(r.Stderr, "moved on the forge") {
		t.Errorf("land did not say the base moved:\n%s", r.Stderr)
	}
	wantLandedThrough(t, g, dir, repo, pr.Number, tip)
	if p := fwtest.GitOut(t, dir, "rev-parse", "main^1"); p != other {
		t.Errorf("main's first parent %s, want the other landing %s", p, other)
	}
}

// doctor says who the token is and what the base's protection asks.
func TestDoctorReadsTheForge(t *testing.T) {
	t.Parallel()
	g := giteatest.Shared(t)
	repo := g.CreateRepo(t, g.Admin, "doctor")
	dir, _ := forgeProject(t, g, repo, "queue")
	g.ProtectBranch(t, repo, "main", giteatest.Protection{Pushers: []string{}, Approvals: 2})
	r := run(t, g, dir, "doctor")
	for _, want := range []string{
		"ok    forge: gitea " + g.URL + "/" + repo + " as " + g.Admin,
		"FAIL  forge: main is protected (pushes by the token's user: no; approvals: 2; checks: none): land: queue cannot push there",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("doctor lacks %q:\n%s", want, r.Stdout)
		}
	}
	r = fwtest.Run(t, dir, "doctor")
	if !strings.Contains(r.Stdout, "FAIL  forge: token_env: $"+tokenVar+" is empty or unset") {
		t.Errorf("doctor without the token:\n%s", r.Stdout)
	}
}

// A PR a person merged by hand on the forge is followed, by queue sync or
// by the queue land that reads the forge first: the local base comes along
// and the approved plan is completed, without a second merge.
func TestAMergeByHandOnTheForgeIsFollowed(t *testing.T) {
	t.Parallel()
	for _, how := range [][]string{{"queue", "sync"}, {"queue", "land", "--yes"}} {
		t.Run(how[1], func(t *testing.T) {
			t.Parallel()
			g := giteatest.Shared(t)
			repo, dir, pr, _ := queued(t, g, "by-hand-"+how[1], "queue", nil)
			owner, name, _ := strings.Cut(repo, "/")
			var merged bool
			var err error
			for end := time.Now().Add(10 * time.Second); time.Now().Before(end) && !merged; time.Sleep(200 * time.Millisecond) {
				merged, _, err = g.Client(t).MergePullRequest(owner, name, int64(pr.Number), gitea.MergePullRequestOption{Style: gitea.MergeStyleMerge})
			}
			if !merged {
				t.Fatalf("the merge by hand: %v", err)
			}
			b, _, err := g.Client(t).GetRepoBranch(owner, name, "main")
			if err != nil {
				t.Fatal(err)
			}
			r := run(t, g, dir, how...)
			if !strings.Contains(r.Stdout+r.Stderr, "x: merged on the forge; main is at "+b.Commit.ID[:12]+" and the plan is completed") {
				t.Fatalf("%s said (exit %d):\n%s%s", strings.Join(how, " "), r.Code, r.Stdout, r.Stderr)
			}
			if local := fwtest.GitOut(t, dir, "rev-parse", "main"); local != b.Commit.ID {
				t.Errorf("local main %s, the forge's %s", local, b.Commit.ID)
			}
			if !fwtest.Exists(dir, "completed/x.md") {
				t.Error("the plan was not completed")
			}
			if l := run(t, g, dir, "queue", "list"); !strings.Contains(l.Stdout, "no candidates") {
				t.Errorf("queue list:\n%s", l.Stdout)
			}
		})
	}
}

// A forge that does not answer costs the run a note, never its plan, and
// queue sync says what it could not do.
func TestAForgeThatIsDownCostsTheRunANote(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "bugs/x.md"})
	testkit.Git(t, dir, "branch", "-M", "main")
	landkit.Write(t, dir, "fleetwatch.yaml", "integration: main\nforge: {kind: gitea, url: http://127.0.0.1:9, repo: team/api, token_env: "+tokenVar+"}\n")
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-commit")
	env := []string{tokenVar + "=not-a-real-token"}
	r := fwtest.RunEnv(t, dir, env, "work-once", "--run", "--ensure-worktree", "--agent-id", "mid-1")
	fwtest.Want(t, r, 0)
	if !fwtest.Exists(dir, "review-needed/x.md") {
		t.Fatal("the plan did not reach review-needed/")
	}
	log, _ := os.ReadFile(filepath.Join(dir, "var", "fleet", "logs", "mid-1.log"))
	if !strings.Contains(string(log), "the pull request was not opened") {
		t.Errorf("the worker's log does not say the PR is missing:\n%s", log)
	}
	r = fwtest.RunEnv(t, dir, env, "queue", "sync")
	fwtest.Want(t, r, 2)
	if !strings.Contains(r.Stderr, "127.0.0.1:9") {
		t.Errorf("queue sync:\n%s", r.Stderr)
	}
}
