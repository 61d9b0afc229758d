package forgetest

import (
	"encoding/json"
	"fmt"
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

// tokenVar holds the forge token in the tests' fleetwatch processes; the
// FLEET_ prefix makes the fake agent record it, were it ever to get it.
const tokenVar = "FLEET_TEST_FORGE_TOKEN"

// forgeProject is a project whose main is on repo (owner/name) of g, with
// a check that fails on a file named bad, a plan bugs/x.md, and the fake
// agent committing a file and recording its environment to rec.
func forgeProject(t *testing.T, g *giteatest.Server, repo, land string) (dir, rec string) {
	t.Helper()
	dir = fwtest.GitProject(t, fwtest.Plan{Rel: "bugs/x.md"})
	testkit.Git(t, dir, "branch", "-M", "main")
	landkit.Write(t, dir, "fleetwatch.yaml", fmt.Sprintf("integration: main\n%sforge:\n  kind: gitea\n  url: %s\n  repo: %s\n  token_env: %s\n  land: %s\n",
		landkit.PassCheck, g.URL, repo, tokenVar, land))
	landkit.Write(t, dir, ".gitignore", "var/\n.plans/\nendpoints.yaml\n")
	testkit.Git(t, dir, "add", "fleetwatch.yaml", ".gitignore")
	testkit.Git(t, dir, "commit", "-q", "-m", "settings")
	testkit.Git(t, dir, "push", "-q", g.GitURL(repo), "main:refs/heads/main")
	g.WaitBranch(t, repo, "main", fwtest.GitOut(t, dir, "rev-parse", "main"))
	rec = filepath.Join(t.TempDir(), "rec.json")
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-record", rec, "-commit")
	return dir, rec
}

func run(t *testing.T, g *giteatest.Server, dir string, args ...string) fwtest.Result {
	t.Helper()
	return fwtest.RunEnv(t, dir, []string{tokenVar + "=" + g.Token}, args...)
}

// prRecord is var/fleet/forge/<slug>.json.
type prRecord struct {
	Number int    `json:"number"`
	URL    string `json:"url"`
	State  string `json:"state"`
	Tip    string `json:"tip"`
	Pushed string `json:"pushed"`
}

func readRecord(t *testing.T, dir, slug string) prRecord {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "var", "fleet", "forge", slug+".json"))
	if err != nil {
		t.Fatalf("no PR record: %v", err)
	}
	var r prRecord
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// toReview runs the worker: the plan reaches review-needed/ with a PR
// whose head is the plan's branch, opened by the driver; the agent never
// saw the token.
func toReview(t *testing.T, g *giteatest.Server, dir, rec, repo string) (prRecord, string) {
	t.Helper()
	fwtest.Want(t, run(t, g, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "mid-1"), 0)
	if !fwtest.Exists(dir, "review-needed/x.md") {
		t.Fatalf("the plan did not reach review-needed/: %v", fwtest.EventsOf(t, dir))
	}
	tip := fwtest.GitOut(t, dir, "rev-parse", "feature/x")
	pr := readRecord(t, dir, "x")
	if pr.Number == 0 || pr.Tip != tip || pr.State != "open" || !strings.HasPrefix(pr.URL, g.URL+"/"+repo+"/pulls/") {
		t.Fatalf("PR record %+v, tip %s", pr, tip)
	}
	owner, name, _ := strings.Cut(repo, "/")
	got, _, err := g.Client(t).GetPullRequest(owner, name, int64(pr.Number))
	if err != nil || got.Head == nil || got.Head.Sha != tip || got.Base == nil || got.Base.Ref != "main" || got.Title != "x" {
		t.Fatalf("the PR on the forge: %+v (%v)", got, err)
	}
	if !strings.Contains(got.Body, ".plans/review-needed/x.md") {
		t.Errorf("the PR's body does not link the plan:\n%s", got.Body)
	}
	seen, err := os.ReadFile(rec)
	if err != nil || strings.Contains(string(seen), g.Token) || strings.Contains(string(seen), tokenVar) {
		t.Fatalf("the agent's record (%v) shows the token:\n%s", err, seen)
	}
	return pr, tip
}

// approveOnForge is alice's approve of commit on the forge, then a sync.
func approveOnForge(t *testing.T, g *giteatest.Server, dir, repo string, number int, commit string) {
	t.Helper()
	owner, name, _ := strings.Cut(repo, "/")
	login := "alice-" + name // a user per test: the Gitea is shared
	alice := g.NewUser(t, login)
	g.Collaborate(t, repo, login)
	_, _, err := g.ClientAs(t, alice).CreatePullReview(owner, name, int64(number), gitea.CreatePullReviewOptions{
		State: gitea.ReviewStateApproved, Body: "looks right", CommitID: commit,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, g, dir, "queue", "sync")
	fwtest.Want(t, r, 0)
	if !strings.Contains(r.Stdout, "by "+login+" on the forge") {
		t.Fatalf("queue sync did not take the approval in:\n%s%s", r.Stdout, r.Stderr)
	}
	if by := approvedBy(t, dir); by != login+"@gitea" {
		t.Fatalf("approved by %q", by)
	}
}

func approvedBy(t *testing.T, dir string) string {
	for _, it := range landkit.List(t, dir).Items {
		if it.Slug == "x" {
			return it.ApprovedBy
		}
	}
	return ""
}

// wantLandedThrough checks the base on the forge is the commit the checks
// passed on, exactly: its statuses say so, its tree is the candidate's,
// the PR is merged, the plan completed.
func wantLandedThrough(t *testing.T, g *giteatest.Server, dir, repo string, number int, tip string) {
	t.Helper()
	owner, name, _ := strings.Cut(repo, "/")
	c := g.Client(t)
	b, _, err := c.GetRepoBranch(owner, name, "main")
	if err != nil || b.Commit == nil {
		t.Fatalf("main on the forge: %v", err)
	}
	main := b.Commit.ID
	if local := fwtest.GitOut(t, dir, "rev-parse", "main"); local != main {
		t.Errorf("local main %s, the forge's %s", local, main)
	}
	if p := fwtest.GitOut(t, dir, "rev-parse", main+"^2"); p != tip {
		t.Errorf("main %s merges %s, want the approved %s", main, p, tip)
	}
	st, _, err := c.GetCombinedStatus(owner, name, main)
	if err != nil || st.State != gitea.StatusSuccess || len(st.Statuses) != 1 || st.Statuses[0].Context != "fleetwatch/test" {
		t.Errorf("statuses of main %s: %+v (%v)", main, st, err)
	}
	var merged bool
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end) && !merged; time.Sleep(100 * time.Millisecond) {
		pr, _, err := c.GetPullRequest(owner, name, int64(number))
		merged = err == nil && pr.HasMerged
	}
	if !merged {
		t.Errorf("PR #%d is not merged on the forge", number)
	}
	if !fwtest.Exists(dir, "completed/x.md") {
		t.Errorf("the plan did not reach completed/")
	}
}

// queued is a plan approved on the forge by a person and queued: a repo
// name of g's, its project landing as land says, the base protected as
// protect says (nil: not), the PR the driver opened and the approved tip.
func queued(t *testing.T, g *giteatest.Server, name, land string, protect *giteatest.Protection) (repo, dir string, pr prRecord, tip string) {
	t.Helper()
	repo = g.CreateRepo(t, g.Admin, name)
	dir, rec := forgeProject(t, g, repo, land)
	if protect != nil {
		g.ProtectBranch(t, repo, "main", *protect)
	}
	pr, tip = toReview(t, g, dir, rec, repo)
	approveOnForge(t, g, dir, repo, pr.Number, tip)
	fwtest.Want(t, run(t, g, dir, "queue", "add", "x"), 0)
	return repo, dir, pr, tip
}

func TestQueueLandsThroughTheForge(t *testing.T) {
	t.Parallel()
	g := giteatest.Shared(t)
	repo, dir, pr, tip := queued(t, g, "queue-lands", "queue", nil)
	r := run(t, g, dir, "queue", "land", "--yes")
	fwtest.Want(t, r, 0)
	wantLandedThrough(t, g, dir, repo, pr.Number, tip)
	if l := run(t, g, dir, "queue", "list"); !strings.Contains(l.Stdout, "no candidates") {
		t.Errorf("queue list after landing:\n%s", l.Stdout)
	}
}

func TestForgeLandsWhereMainTakesNoPush(t *testing.T) {
	t.Parallel()
	g := giteatest.Shared(t)
	repo, dir, pr, tip := queued(t, g, "forge-lands", "auto", &giteatest.Protection{Pushers: []string{}, Approvals: 1, Checks: []string{"fleetwatch/test"}})
	r := run(t, g, dir, "queue", "land", "--yes")
	fwtest.Want(t, r, 0)
	if !strings.Contains(r.Stderr, "merging PR #") {
		t.Errorf("the forge did not merge it:\n%s", r.Stderr)
	}
	wantLandedThrough(t, g, dir, repo, pr.Number, tip)
}

func TestHeadMovedAfterApprovalNeverLands(t *testing.T) {
	t.Parallel()
	g := giteatest.Shared(t)
	repo, dir, pr, _ := queued(t, g, "head-moved", "queue", nil)
	// Somebody pushes to the PR's branch on the forge after the approval.
	w := giteatest.NewWork(t)
	w.Git("fetch", "-q", g.GitURL(repo), "feature/x")
	w.Git("checkout", "-q", "FETCH_HEAD")
	moved := w.Commit("sneaky.txt", "not reviewed\n", "after the approval")
	w.Git("push", "-q", g.GitURL(repo), "HEAD:refs/heads/feature/x")
	g.WaitBranch(t, repo, "feature/x", moved)
	before := fwtest.GitOut(t, dir, "rev-parse", "main")
	r := run(t, g, dir, "queue", "land", "--yes")
	landkit.WantNotReady(t, r, "a commit came after the approval")
	owner, name, _ := strings.Cut(repo, "/")
	b, _, err := g.Client(t).GetRepoBranch(owner, name, "main")
	if err != nil || b.Commit == nil || b.Commit.ID != before {
		t.Fatalf("main on the forge moved: %+v (%v)", b, err)
	}
	got, _, err := g.Client(t).GetPullRequest(owner, name, int64(pr.Number))
	if err != nil || got.HasMerged || got.Head.Sha != moved {
		t.Fatalf("the PR: merged %v head %s (%v)", got.HasMerged, got.Head.Sha, err)
	}
	if !fwtest.Exists(dir, "review-needed/x.md") {
		t.Error("the plan left review-needed/")
	}
	// The next run's push never throws that commit away: the run says so.
	fwtest.Want(t, run(t, g, dir, "review", "x", "--needs-work", "again"), 0)
	fwtest.Want(t, run(t, g, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "mid-2"), 0)
	if log, _ := os.ReadFile(filepath.Join(dir, "var", "fleet", "logs", "mid-2.log")); !strings.Contains(string(log), "which fleetwatch did not push") {
		t.Errorf("the second run's log:\n%s", log)
	}
	if b, _, err := g.Client(t).GetRepoBranch(owner, name, "feature/x"); err != nil || b.Commit == nil || b.Commit.ID != moved {
		t.Fatalf("feature/x on the forge lost the commit pushed there: %+v (%v)", b, err)
	}
}
