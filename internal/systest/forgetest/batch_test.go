package forgetest

import (
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

// With queue: {batch: 2} and the queue's push, two approved PRs land as
// one batch: one checked commit pushed to main, its checks posted on it,
// both PRs merged on the forge.
func TestABatchLandsThroughTheForge(t *testing.T) {
	t.Parallel()
	g := giteatest.Shared(t)
	repo := g.CreateRepo(t, g.Admin, "batch")
	owner, name, _ := strings.Cut(repo, "/")
	dir, rec := forgeProject(t, g, repo, "queue")
	settings := landkit.ReadFile(t, dir, "fleetwatch.yaml")
	landkit.Write(t, dir, "fleetwatch.yaml", settings+"queue: {batch: 2}\n")
	testkit.Git(t, dir, "commit", "-q", "-am", "batches")
	testkit.Git(t, dir, "push", "-q", g.GitURL(repo), "main:refs/heads/main")
	g.WaitBranch(t, repo, "main", fwtest.GitOut(t, dir, "rev-parse", "main"))
	x, tipX := toReview(t, g, dir, rec, repo)
	// y: a change of its own in review, whose PR queue sync opens.
	wt := filepath.Join(t.TempDir(), "y")
	testkit.Git(t, dir, "worktree", "add", "-q", "-b", "feature/y", wt, "main")
	landkit.Write(t, wt, "y.txt", "y\n")
	testkit.Git(t, wt, "add", "y.txt")
	testkit.Git(t, wt, "commit", "-q", "-m", "y")
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "review-needed/y.md"}, 0)
	if r := run(t, g, dir, "queue", "sync"); !strings.Contains(r.Stdout, "y: opened PR #") {
		t.Fatalf("queue sync:\n%s%s", r.Stdout, r.Stderr)
	}
	y := readRecord(t, dir, "y")
	login := "dee-" + name
	dee := g.NewUser(t, login)
	g.Collaborate(t, repo, login)
	for _, pr := range []prRecord{x, y} {
		if _, _, err := g.ClientAs(t, dee).CreatePullReview(owner, name, int64(pr.Number), gitea.CreatePullReviewOptions{
			State: gitea.ReviewStateApproved, CommitID: pr.Tip,
		}); err != nil {
			t.Fatal(err)
		}
	}
	fwtest.Want(t, run(t, g, dir, "queue", "sync"), 0)
	fwtest.Want(t, run(t, g, dir, "queue", "add", "x"), 0)
	fwtest.Want(t, run(t, g, dir, "queue", "add", "y"), 0)
	r := run(t, g, dir, "queue", "land", "--yes")
	fwtest.Want(t, r, 0)
	if !strings.Contains(r.Stdout, "landed x") || !strings.Contains(r.Stdout, "landed y") {
		t.Fatalf("land:\n%s%s", r.Stdout, r.Stderr)
	}
	b, _, err := g.Client(t).GetRepoBranch(owner, name, "main")
	if err != nil || b.Commit == nil || b.Commit.ID != fwtest.GitOut(t, dir, "rev-parse", "main") {
		t.Fatalf("main on the forge is not the local main: %+v (%v)", b, err)
	}
	for _, tip := range []string{tipX, y.Tip} {
		if _, err := landkit.GitCmd(dir, "merge-base", "--is-ancestor", tip, "main"); err != nil {
			t.Errorf("%s is not in main", tip)
		}
	}
	st, _, err := g.Client(t).GetCombinedStatus(owner, name, b.Commit.ID)
	if err != nil || st.State != gitea.StatusSuccess {
		t.Errorf("the batch's statuses: %+v (%v)", st, err)
	}
	for _, pr := range []prRecord{x, y} {
		var merged bool
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end) && !merged; time.Sleep(100 * time.Millisecond) {
			p, _, err := g.Client(t).GetPullRequest(owner, name, int64(pr.Number))
			merged = err == nil && p.HasMerged
		}
		if !merged {
			t.Errorf("PR #%d is not merged on the forge", pr.Number)
		}
	}
	if !fwtest.Exists(dir, "completed/x.md") || !fwtest.Exists(dir, "completed/y.md") {
		t.Error("the plans were not completed")
	}
}
