package reviewtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/internal/systest/landkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// reviewers writes endpoints.yaml: endpoint "mid" whose agent runs with
// midArgs, and "big" (a higher tier) whose review_command runs with bigArgs.
func reviewers(t *testing.T, dir string, midArgs, bigArgs []string) {
	t.Helper()
	argv := func(args []string) string {
		words := []string{fwtest.FakeAgent(t)}
		words = append(words, args...)
		b, _ := json.Marshal(words)
		return string(b)
	}
	landkit.Write(t, dir, "endpoints.yaml", "endpoints:\n"+
		"  - name: mid\n    tier: mid\n    model: fake-1\n    command: "+argv(midArgs)+"\n"+
		"  - name: big\n    tier: reasoner\n    model: fake-2\n    command: "+argv(nil)+"\n    review_command: "+argv(bigArgs)+"\n")
}

func eventsNamed(t *testing.T, dir, name string) []map[string]any {
	var out []map[string]any
	if !fwtest.Exists(dir, "logs/events.jsonl") {
		return nil
	}
	for _, e := range fwtest.EventsOf(t, dir) {
		if e["event"] == name {
			out = append(out, e)
		}
	}
	return out
}

// noReviewWorktrees checks a peer review left no worktree behind.
func noReviewWorktrees(t *testing.T, dir string) {
	t.Helper()
	if entries, _ := os.ReadDir(filepath.Join(dir, "var", "fleet", "reviews", "wt")); len(entries) != 0 {
		t.Errorf("review worktrees left: %v", entries)
	}
	if n := strings.Count(fwtest.GitOut(t, dir, "worktree", "list", "--porcelain"), "worktree "); n != 1 {
		t.Errorf("git still lists %d worktrees:\n%s", n, fwtest.GitOut(t, dir, "worktree", "list"))
	}
}

func TestApproveRecordsTheTip(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, "")
	tip := landkit.Feature(t, dir, "x", map[string]string{"x.txt": "x\n"})
	r := fwtest.Run(t, dir, "review", "x", "--approve")
	fwtest.Want(t, r, 0)
	if !strings.HasPrefix(r.Stdout, "approved feature/x at "+tip[:7]+" (by ") {
		t.Errorf("stdout %q", r.Stdout)
	}
	var ap struct{ Commit, By string }
	json.Unmarshal([]byte(landkit.ReadFile(t, dir, ".plans/reviews/x/approved.json")), &ap)
	if ap.Commit != tip || ap.By == "" {
		t.Errorf("approved.json %+v, want commit %s", ap, tip)
	}
	if ev := eventsNamed(t, dir, "approve"); len(ev) != 1 || ev[0]["slug"] != "x" {
		t.Errorf("approve events %v", ev)
	}
	if l := landkit.List(t, dir); len(l.Items) != 1 || l.Items[0].ApprovedBy != ap.By {
		t.Errorf("queue list does not show the approval: %+v", l.Items)
	}
}

func TestApproveRefusals(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, "")
	landkit.Feature(t, dir, "x", map[string]string{"x.txt": "x\n"})
	fwtest.OneLineError(t, fwtest.RunEnv(t, dir, []string{"FLEET_AGENT_ID=mid-1"}, "review", "x", "--approve"), "FLEET_AGENT_ID")
	fwtest.OneLineError(t, fwtest.Run(t, dir, "review", "nope", "--approve"), "nope", "review-needed")
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "review-needed/bare.md"}, 0)
	fwtest.OneLineError(t, fwtest.Run(t, dir, "review", "bare", "--approve"), "feature/bare")
	testkit.Git(t, dir, "branch", "feature/same", "dev")
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "review-needed/same.md"}, 0)
	fwtest.OneLineError(t, fwtest.Run(t, dir, "review", "same", "--approve"), "not ahead of dev")
	fwtest.OneLineError(t, fwtest.Run(t, dir, "review", "x", "--approve", "--peer"), "exactly one")
	fwtest.OneLineError(t, fwtest.Run(t, dir, "review", "x"), "exactly one")
	if fwtest.Exists(dir, "reviews/x/approved.json") || len(eventsNamed(t, dir, "approve")) != 0 {
		t.Error("a refused approve left an approval")
	}
}

// needs-work sends the plan back to its ready lane with the note, voids the
// approval, keeps the branch, and the next owner's run gets that branch.
func TestNeedsWorkHandsTheBranchOn(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "bugs/x.md"})
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-commit")
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "A"), 0)
	tip := fwtest.GitOut(t, dir, "rev-parse", "feature/x")
	landkit.Approve(t, dir, "x")
	r := fwtest.Run(t, dir, "review", "x", "--needs-work", "the test is flaky\nsee line 3")
	fwtest.Want(t, r, 0)
	if r.Stdout != "sent back to bugs/x.md: the test is flaky see line 3\n" {
		t.Errorf("stdout %q", r.Stdout)
	}
	plan := landkit.ReadFile(t, dir, ".plans/bugs/x.md")
	if !strings.Contains(plan, "## Review notes\n\n- ") || !strings.HasSuffix(plan, " (needs work): the test is flaky\n  see line 3\n") {
		t.Errorf("plan after needs-work:\n%s", plan)
	}
	if fwtest.Exists(dir, "reviews/x/approved.json") {
		t.Error("the approval survived needs-work")
	}
	if len(eventsNamed(t, dir, "needs-work")) != 1 || len(eventsNamed(t, dir, "void-approval")) != 1 {
		t.Errorf("events %v", fwtest.EventsOf(t, dir))
	}
	if got := fwtest.GitOut(t, dir, "rev-parse", "feature/x"); got != tip {
		t.Fatalf("feature/x moved to %s, want %s", got, tip)
	}
	rec := filepath.Join(t.TempDir(), "rec.json")
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-record", rec, "-commit")
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "B"), 0)
	wtB := filepath.Join(dir, "var", "worktrees", "B")
	if b := fwtest.GitOut(t, wtB, "rev-parse", "--abbrev-ref", "HEAD"); b != "feature/x" {
		t.Errorf("B works on %q, want feature/x", b)
	}
	// B's one commit sits on the reviewed tip.
	if h := fwtest.GitOut(t, wtB, "rev-parse", "HEAD~1"); h != tip {
		t.Errorf("B started at %s, want the reviewed %s", h, tip)
	}
}

func TestDeferBlocks(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, "")
	landkit.Feature(t, dir, "x", map[string]string{"x.txt": "x\n"})
	landkit.Approve(t, dir, "x")
	r := fwtest.Run(t, dir, "review", "x", "--defer", "after the release")
	fwtest.Want(t, r, 0)
	if r.Stdout != "sent back to blocked/x.md: after the release\n" {
		t.Errorf("stdout %q", r.Stdout)
	}
	if !strings.Contains(landkit.ReadFile(t, dir, ".plans/blocked/x.md"), " (deferred): after the release\n") || fwtest.Exists(dir, "reviews/x/approved.json") {
		t.Error("defer did not note or void")
	}
	fwtest.OneLineError(t, fwtest.Run(t, dir, "review", "x", "--defer", "again"), "x")
}

func TestPeerReviewAccepts(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, "")
	tip := landkit.Feature(t, dir, "x", map[string]string{"x.txt": "x\n"})
	reviewers(t, dir, []string{"-verdict", "ACCEPT"}, nil)
	r := fwtest.Run(t, dir, "review", "x", "--peer")
	fwtest.Want(t, r, 0)
	rel := ".plans/reviews/x/" + tip + ".md"
	if r.Stdout != "peer review by review-mid: ACCEPT ("+rel+")\n" {
		t.Errorf("stdout %q", r.Stdout)
	}
	text := landkit.ReadFile(t, dir, rel)
	base := fwtest.GitOut(t, dir, "merge-base", "dev", tip)
	for _, want := range []string{"- **Verdict:** ACCEPT\n", "- **Reviewer:** review-mid\n", "- **Endpoint:** mid\n",
		"- **Commit:** " + tip + "\n", "- **Base:** " + base + "\n", "- reviewed " + tip + " against " + base + " in mode review\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("review lacks %q:\n%s", want, text)
		}
	}
	if ev := eventsNamed(t, dir, "review"); len(ev) != 1 || ev[0]["agent_id"] != "review-mid" {
		t.Errorf("review events %v", ev)
	}
	if !strings.Contains(landkit.ReadFile(t, dir, "var/fleet/logs/review-x.log"), "ACCEPT") {
		t.Error("the reviewer's stdout is not in its log")
	}
	noReviewWorktrees(t, dir)
}

// A higher-tier endpoint's review_command hands back REVISE in $FLEET_REVIEW.
func TestPeerReviewRevisesThroughTheReviewFile(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, "")
	tip := landkit.Feature(t, dir, "x", map[string]string{"x.txt": "x\n"})
	reviewers(t, dir, []string{"-verdict", "ACCEPT"}, []string{"-verdict", "REVISE", "-review-file"})
	r := fwtest.Run(t, dir, "review", "x", "--peer", "--endpoint", "big", "--agent-id", "reasoner-9")
	fwtest.Want(t, r, 0)
	if !strings.HasPrefix(r.Stdout, "peer review by reasoner-9: REVISE (") {
		t.Errorf("stdout %q", r.Stdout)
	}
	if text := landkit.ReadFile(t, dir, ".plans/reviews/x/"+tip+".md"); !strings.Contains(text, "- **Verdict:** REVISE\n") || !strings.Contains(text, "## Findings") {
		t.Errorf("review:\n%s", text)
	}
	noReviewWorktrees(t, dir)
}

func TestPeerReviewThatWritesIsRefused(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, "")
	landkit.Feature(t, dir, "x", map[string]string{"x.txt": "x\n"})
	// Contained, the reviewer's write fails in the reviewer itself.
	reviewers(t, dir, []string{"-verdict", "ACCEPT", "-write", "notes.txt"}, nil)
	refusals := 2
	if _, err := sandbox.ABI(); err == nil {
		peerRefused(t, fwtest.Run(t, dir, "review", "x", "--peer"), "the reviewer review-mid failed")
		refusals++
	}
	// Uncontained, the driver's own look at the worktree refuses it.
	fwtest.Uncontained(t, dir)
	for _, args := range [][]string{{"-verdict", "ACCEPT", "-write", "notes.txt"}, {"-verdict", "ACCEPT", "-commit"}} {
		reviewers(t, dir, args, nil)
		r := fwtest.Run(t, dir, "review", "x", "--peer")
		peerRefused(t, r, "wrote in its worktree")
		if args[2] == "-write" && !strings.Contains(r.Stderr, "notes.txt") {
			t.Errorf("the refusal does not name the file: %q", r.Stderr)
		}
		if args[2] == "-commit" && !strings.Contains(r.Stderr, "HEAD moved") {
			t.Errorf("the refusal does not say HEAD moved: %q", r.Stderr)
		}
		if fwtest.Exists(dir, "reviews/x") && len(mustReadDir(t, filepath.Join(dir, ".plans", "reviews", "x"))) != 0 {
			t.Error("a refused review was stored")
		}
		noReviewWorktrees(t, dir)
	}
	if ev := eventsNamed(t, dir, "review-refused"); len(ev) != refusals {
		t.Errorf("review-refused events %v", ev)
	}
	reviewers(t, dir, []string{"-lines", "1"}, nil)
	peerRefused(t, fwtest.Run(t, dir, "review", "x", "--peer"), "no verdict")
}

// peerRefused checks a peer review's refusal: exit 2, its last line (after
// the progress line) naming each of names.
func peerRefused(t *testing.T, r fwtest.Result, names ...string) {
	t.Helper()
	if r.Code != 2 {
		t.Errorf("want exit 2, got %v", r)
	}
	last := fwtest.LastLine(r.Stderr)
	for _, n := range append(names, "fleetwatch: review x: ") {
		if !strings.Contains(last, n) {
			t.Errorf("the refusal does not name %q: %q", n, last)
		}
	}
}

func mustReadDir(t *testing.T, dir string) []os.DirEntry {
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return entries
}

// The author (whose run moved the plan to review-needed) never reviews its
// own change; the default reviewer is another endpoint's id.
func TestPeerReviewNeverByTheAuthor(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.md"})
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-commit")
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "mid-1"), 0)
	reviewers(t, dir, []string{"-verdict", "ACCEPT"}, []string{"-verdict", "ESCALATE"})
	fwtest.OneLineError(t, fwtest.Run(t, dir, "review", "x", "--peer", "--agent-id", "mid-1"), "mid-1", "own change")
	r := fwtest.Run(t, dir, "review", "x", "--peer")
	fwtest.Want(t, r, 0)
	if strings.Contains(r.Stdout, "mid-1") || !strings.Contains(r.Stdout, "peer review by review-") {
		t.Errorf("stdout %q", r.Stdout)
	}
}

type reviewListing struct {
	Items []struct {
		Slug       string `json:"slug"`
		ApprovedBy string `json:"approved_by"`
		Approval   *struct {
			Commit string `json:"commit"`
			Stale  bool   `json:"stale"`
		} `json:"approval"`
		Reviews []struct {
			Commit  string `json:"commit"`
			Verdict string `json:"verdict"`
			Stale   bool   `json:"stale"`
		} `json:"reviews"`
	} `json:"items"`
}

// reviewState is slug's approver and whether its one review is stale, from
// queue list --json.
func reviewState(t *testing.T, dir, slug string) (approvedBy string, stale bool) {
	t.Helper()
	r := fwtest.Run(t, dir, "queue", "list", "--json")
	fwtest.Want(t, r, 0)
	var l reviewListing
	if err := json.Unmarshal([]byte(r.Stdout), &l); err != nil {
		t.Fatal(err)
	}
	for _, it := range l.Items {
		if it.Slug == slug {
			if len(it.Reviews) != 1 {
				t.Fatalf("%s has reviews %+v", slug, it.Reviews)
			}
			return it.ApprovedBy, it.Reviews[0].Stale
		}
	}
	t.Fatalf("%s not listed:\n%s", slug, r.Stdout)
	return "", false
}

// peerReviewedAndApproved is a project whose change x a peer accepted and
// a person approved.
func peerReviewedAndApproved(t *testing.T) string {
	t.Helper()
	dir := landkit.LandProject(t, "")
	landkit.Feature(t, dir, "x", map[string]string{"x.txt": "x\n"})
	reviewers(t, dir, []string{"-verdict", "ACCEPT"}, nil)
	fwtest.Want(t, fwtest.Run(t, dir, "review", "x", "--peer"), 0)
	landkit.Approve(t, dir, "x")
	return dir
}

func TestReviewStaleAfterANewCommit(t *testing.T) {
	t.Parallel()
	dir := peerReviewedAndApproved(t)
	if by, stale := reviewState(t, dir, "x"); by == "" || stale {
		t.Fatalf("fresh review: approved by %q, stale %v", by, stale)
	}
	landkit.Feature(t, dir, "x", map[string]string{"more.txt": "pushed after review\n"})
	if by, stale := reviewState(t, dir, "x"); by != "" || !stale {
		t.Errorf("after a new commit: approved by %q, stale %v; want no approver and a stale review", by, stale)
	}
}

func TestReviewHoldsAcrossAPureRebase(t *testing.T) {
	t.Parallel()
	dir := peerReviewedAndApproved(t)
	// dev moves on; the branch is rebased onto it unchanged.
	wt := filepath.Join(t.TempDir(), "dev")
	testkit.Git(t, dir, "worktree", "add", "-q", wt, "dev")
	landkit.Write(t, wt, "other.txt", "other\n")
	testkit.Git(t, wt, "add", "other.txt")
	testkit.Git(t, wt, "commit", "-q", "-m", "dev moves")
	testkit.Git(t, wt, "checkout", "-q", "--detach")
	testkit.Git(t, wt, "checkout", "-q", "feature/x")
	testkit.Git(t, wt, "rebase", "-q", "dev")
	testkit.Git(t, dir, "worktree", "remove", "--force", wt)
	if by, stale := reviewState(t, dir, "x"); by == "" || stale {
		t.Errorf("after a pure rebase: approved by %q, stale %v; want both to hold", by, stale)
	}
}

// A reviewer that hangs is killed at --timeout, and nothing is stored.
func TestPeerReviewTimesOut(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, "")
	landkit.Feature(t, dir, "x", map[string]string{"x.txt": "x\n"})
	reviewers(t, dir, []string{"-sleep", "1m", "-verdict", "ACCEPT"}, nil)
	start := time.Now()
	peerRefused(t, fwtest.Run(t, dir, "review", "x", "--peer", "--timeout", "1s"), "did not finish within 1s")
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the timeout took %v", took)
	}
	if fwtest.Exists(dir, "reviews/x") && len(mustReadDir(t, filepath.Join(dir, ".plans", "reviews", "x"))) != 0 {
		t.Error("a timed-out review was stored")
	}
	noReviewWorktrees(t, dir)
}

// needs-work killed after noting the plan and before moving it: the rerun
// finishes the move without noting twice.
func TestNeedsWorkCrashThenRerun(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, "")
	landkit.Feature(t, dir, "x", map[string]string{"x.txt": "x\n"})
	landkit.Approve(t, dir, "x")
	r := fwtest.RunEnv(t, dir, []string{"FLEETWATCH_FAILPOINT=sendback:noted"}, "review", "x", "--needs-work", "fix it")
	if r.Code == 0 || !fwtest.Exists(dir, "review-needed/x.md") {
		t.Fatalf("the failpoint did not stop it: %v", r)
	}
	if !strings.Contains(landkit.ReadFile(t, dir, ".plans/review-needed/x.md"), "(needs work): fix it") {
		t.Error("the note was not written before the crash")
	}
	fwtest.Want(t, fwtest.Run(t, dir, "review", "x", "--needs-work", "fix it"), 0)
	if plan := landkit.ReadFile(t, dir, ".plans/features/x.md"); strings.Count(plan, "fix it") != 1 {
		t.Errorf("after the rerun:\n%s", plan)
	}
	if fwtest.Exists(dir, "reviews/x/approved.json") {
		t.Error("the approval survived")
	}
}

// Plans a+b and a-b would share feature/a-b: approving, queueing or landing
// it could carry the other plan's unreviewed commits, so the gate refuses
// it, naming both, until one is renamed.
func TestSharedBranchNeverPassesTheGate(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, "")
	landkit.Feature(t, dir, "a-b", map[string]string{"x.txt": "x\n"})
	fwtest.Run(t, dir, "review", "a-b", "--approve")
	fwtest.Want(t, fwtest.Run(t, dir, "queue", "add", "a-b"), 0)
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "features/a+b.md"}, 0)
	for _, args := range [][]string{{"review", "a-b", "--approve"}, {"queue", "land", "--yes", "--ungated"}} {
		r := fwtest.Run(t, dir, args...)
		if r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, "features/a+b.md") || !strings.Contains(r.Stderr, "feature/a-b") {
			t.Errorf("%v: %v", args, r)
		}
	}
	if got := fwtest.GitOut(t, dir, "rev-parse", "refs/heads/dev"); got != fwtest.GitOut(t, dir, "rev-parse", "HEAD") {
		t.Errorf("dev moved to %s", got)
	}
}

// A peer review spends like a build: what its reviewer reports of itself
// ($FLEET_USAGE) is recorded in the usage ledger as a review run.
func TestPeerReviewIsRecordedInTheLedger(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, "")
	landkit.Feature(t, dir, "x", map[string]string{"x.txt": "x\n"})
	reviewers(t, dir, []string{"-verdict", "ACCEPT", "-usage-line", `{"input_tokens":300,"output_tokens":30,"model":"fake-1"}`}, nil)
	fwtest.Want(t, fwtest.Run(t, dir, "review", "x", "--peer"), 0)
	r := fwtest.Run(t, dir, "usage", "--by", "agent", "--json")
	if !strings.Contains(r.Stdout, `"key":"review-mid"`) || !strings.Contains(r.Stdout, `"input_tokens":300`) || !strings.Contains(r.Stdout, `"reported_runs":1`) {
		t.Errorf("the review's run is not in the ledger: %v", r)
	}
	if ledger := landkit.ReadFile(t, dir, "var/fleet/usage/runs.jsonl"); !strings.Contains(ledger, `"mode":"review"`) || !strings.Contains(ledger, `"plan":"x"`) {
		t.Errorf("ledger:\n%s", ledger)
	}
}
