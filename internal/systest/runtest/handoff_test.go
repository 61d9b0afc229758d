package runtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// handOffSetup: agent A works features/x.md in its worktree with --run
// --ensure-worktree, its agent fails, so the plan is handed back at once,
// and A's worktree gets a commit. It returns the project and A's worktree
// and commit.
func handOffSetup(t *testing.T) (dir, wtA, commitA string) {
	dir = fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.md", Fields: "Priority: P1"}, fwtest.Plan{Rel: "features/y.md"})
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-exit", "3")
	if r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "A"); r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, "agent exited 3") {
		t.Fatalf("A's run: %v", r)
	}
	wtA = filepath.Join(dir, "var", "worktrees", "A")
	if err := os.WriteFile(filepath.Join(wtA, "work.txt"), []byte("A's work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testkit.Git(t, wtA, "add", "work.txt")
	testkit.Git(t, wtA, "commit", "-q", "-m", "A's commit")
	commitA = fwtest.GitOut(t, wtA, "rev-parse", "HEAD")
	if !fwtest.Exists(dir, "features/x.md") {
		t.Fatal("A's failed run should have handed x back")
	}
	return dir, wtA, commitA
}

// A plan released by one agent is worked by the next: B gets feature/x with
// every commit A made on it; A's clean worktree lets go of the branch.
func TestHandOffBranchToTheNextAgent(t *testing.T) {
	t.Parallel()
	dir, wtA, commitA := handOffSetup(t)
	rec := filepath.Join(t.TempDir(), "rec.json")
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-record", rec, "-commit")
	r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "B")
	if r.Code != 0 || !fwtest.Exists(dir, "review-needed/x.md") {
		t.Fatalf("B's run: %v", r)
	}
	wtB := filepath.Join(dir, "var", "worktrees", "B")
	var got struct{ Cwd string }
	data, _ := os.ReadFile(rec)
	json.Unmarshal(data, &got)
	if got.Cwd != wtB {
		t.Errorf("B's agent ran in %q, want %q", got.Cwd, wtB)
	}
	if b := fwtest.GitOut(t, wtB, "rev-parse", "--abbrev-ref", "HEAD"); b != "feature/x" {
		t.Errorf("B is on %q", b)
	}
	if h := fwtest.GitOut(t, dir, "rev-parse", "feature/x~1"); h != commitA {
		t.Errorf("B's commit sits on %s, want A's commit %s", h, commitA)
	}
	if head := fwtest.GitOut(t, wtA, "rev-parse", "HEAD"); head != commitA || fwtest.GitOut(t, wtA, "status", "--porcelain") != "" {
		t.Errorf("A's worktree should stay at its commit, clean: %s", head)
	}
	if out, _ := exec.Command("git", "-C", wtA, "symbolic-ref", "-q", "HEAD").Output(); len(out) != 0 {
		t.Errorf("A's worktree still on %s", out)
	}
	if refs := fwtest.GitOut(t, dir, "for-each-ref", "refs/fleetwatch/keep/"); refs != "" {
		t.Errorf("a clean worktree needs no keep ref: %s", refs)
	}
	if !strings.Contains(r.Stderr, "feature/x taken over from agent A's worktree") {
		t.Errorf("stderr does not say so: %v", r)
	}
}

// A dirty worktree has its changes, untracked files included, committed to a
// keep ref before it lets go; its files stay; the event log says so.
func TestHandOffKeepsADirtyWorktreesChanges(t *testing.T) {
	t.Parallel()
	dir, wtA, commitA := handOffSetup(t)
	os.WriteFile(filepath.Join(wtA, "work.txt"), []byte("A's work, changed\n"), 0o644)
	os.WriteFile(filepath.Join(wtA, "notes.txt"), []byte("untracked\n"), 0o644)
	r := fwtest.Run(t, dir, "work-once", "--once", "--ensure-worktree", "--agent-id", "B")
	if r.Code != 0 || !strings.Contains(r.Stdout, "BRANCH=feature/x\n") {
		t.Fatalf("B's claim: %v", r)
	}
	refs := strings.Fields(fwtest.GitOut(t, dir, "for-each-ref", "--format=%(refname)", "refs/fleetwatch/keep/A/"))
	if len(refs) != 1 {
		t.Fatalf("keep refs: %v", refs)
	}
	keep := refs[0]
	if got := fwtest.GitOut(t, dir, "show", keep+":notes.txt"); got != "untracked" {
		t.Errorf("keep ref's notes.txt: %q", got)
	}
	if got := fwtest.GitOut(t, dir, "show", keep+":work.txt"); got != "A's work, changed" {
		t.Errorf("keep ref's work.txt: %q", got)
	}
	if parent := fwtest.GitOut(t, dir, "rev-parse", keep+"^"); parent != commitA {
		t.Errorf("keep commit's parent %s, want %s", parent, commitA)
	}
	if h := fwtest.GitOut(t, dir, "rev-parse", "feature/x"); h != commitA {
		t.Errorf("feature/x moved to %s", h)
	}
	if data, _ := os.ReadFile(filepath.Join(wtA, "notes.txt")); string(data) != "untracked\n" {
		t.Errorf("A's files must stay: %q", data)
	}
	tree, _ := planfs.Open(dir)
	events, _ := tree.Events()
	var said bool
	for _, e := range events {
		said = said || e.Event == "handoff" && e.AgentID == "B" && strings.Contains(e.Reason, keep)
	}
	if !said {
		t.Errorf("no handoff event naming %s: %+v", keep, events)
	}
}

// A plan whose branch git refuses is skipped by workers that make branches,
// shown with its reason in --list, board and check, and does not hold back
// the plan after it.
func TestBranchRefusedPlanIsSkipped(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.lock.md", Fields: "Priority: P1"}, fwtest.Plan{Rel: "features/next.md"})
	r := fwtest.Run(t, dir, "work-once", "--list", "--json", "--ensure-worktree", "--agent-id", "w1")
	if !strings.Contains(r.Stdout, `"reason":"cannot be claimed: git refuses its branch name feature/x.lock`) {
		t.Errorf("--list --json: %v", r)
	}
	r = fwtest.Run(t, dir, "work-once", "--list", "--ensure-worktree", "--agent-id", "w1")
	if !strings.Contains(r.Stderr, "features/x.lock.md  git refuses its branch name feature/x.lock") {
		t.Errorf("--list: %v", r)
	}
	if r := fwtest.Run(t, dir, "board", "--json"); !strings.Contains(r.Stdout, `"problem": "git refuses its branch name feature/x.lock`) {
		t.Errorf("board --json: %v", r)
	}
	if r := fwtest.Run(t, dir, "check"); !strings.Contains(r.Stdout+r.Stderr, "features/x.lock.md") || !strings.Contains(r.Stdout+r.Stderr, "git refuses its branch name") {
		t.Errorf("check: %v", r)
	}
	r = fwtest.Run(t, dir, "work-once", "--once", "--ensure-worktree", "--agent-id", "w1")
	if r.Code != 0 || !fwtest.Exists(dir, "in-progress/next.md") || !fwtest.Exists(dir, "features/x.lock.md") {
		t.Fatalf("the worker should take next.md: %v", r)
	}
	// A claim-only worker needs no branch and may take it.
	if r := fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w2"); r.Code != 0 || !fwtest.Exists(dir, "in-progress/x.lock.md") {
		t.Fatalf("claim-only worker: %v", r)
	}
}

// A plan whose name is too long for its lease file is skipped by every
// claim, never stranded in in-progress/, and reported.
func TestLongNamePlanIsSkipped(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("n", 240-3) + ".md"
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/" + long, Fields: "Priority: P1"}, fwtest.Plan{Rel: "features/next.md"})
	r := fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w1")
	if r.Code != 0 || !fwtest.Exists(dir, "in-progress/next.md") || !fwtest.Exists(dir, "features/"+long) || fwtest.Exists(dir, "in-progress/"+long) {
		t.Fatalf("work-once: %v", r)
	}
	if r := fwtest.Run(t, dir, "work-once", "--once", "--agent-id", "w1", "--path", filepath.Join(dir, ".plans", "features", long)); r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, "over 237") || fwtest.Exists(dir, "in-progress/"+long) {
		t.Fatalf("named claim: %v", r)
	}
	if r := fwtest.Run(t, dir, "work-once", "--list", "--json"); !strings.Contains(r.Stdout, "file name is 240 bytes") {
		t.Errorf("--list --json: %v", r)
	}
	if r := fwtest.Run(t, dir, "check"); !strings.Contains(r.Stdout+r.Stderr, "no claim can take it") {
		t.Errorf("check: %v", r)
	}
}

// --run prints a plan's path only once an agent is started on it, and a port
// given to a run that never started an agent goes back.
func TestRunPrintsAndKeepsAPortOnlyWhenTheAgentStarts(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	// Found at claim time only: the placeholder is filled per plan.
	fwtest.WithExecutor(t, dir, "{worktree}/no-such-agent")
	r := fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w1")
	if r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, "did not start") || r.Stdout != "" {
		t.Fatalf("an agent that never started: %v", r)
	}
	if !fwtest.Exists(dir, "features/a.md") {
		t.Error("the plan should be released")
	}
	ports := func() string {
		data, _ := os.ReadFile(filepath.Join(dir, "var", "worktrees", "ports.json"))
		return string(data)
	}
	if p := ports(); strings.Contains(p, `"w1"`) {
		t.Errorf("w1 keeps a port it never used: %s", p)
	}
	// Nothing to claim: no port either.
	if r := fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w2", "--slug", "none"); r.Code != fwtest.ExitNothing {
		t.Fatalf("nothing to claim: %v", r)
	}
	if p := ports(); strings.Contains(p, `"w2"`) {
		t.Errorf("w2 keeps a port it never used: %s", p)
	}
	// An agent that starts keeps its port.
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t))
	if r := fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w3"); r.Code != 0 || !strings.HasPrefix(r.Stdout, filepath.Join(dir, ".plans", "in-progress", "a.md")+"\n") {
		t.Fatalf("w3: %v", r)
	}
	if p := ports(); !strings.Contains(p, `"w3"`) {
		t.Errorf("w3 lost its port: %s", p)
	}
	_ = time.Second
}
