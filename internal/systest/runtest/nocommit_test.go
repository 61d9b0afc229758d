package runtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// An agent that exits 0 with an edit and no commit has made no change to
// review: the plan is parked in blocked/ with the reason, which the
// driver's log, the event log and the worker's state file all say, and
// the branch is where it was.
func TestRunThatCommitsNothingIsParked(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.md"})
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-write", "edit.txt")
	before := fwtest.GitOut(t, dir, "rev-parse", "HEAD")
	r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "w1")
	const why = "agent exited 0 but made no commit: 1 file changed, not committed"
	if r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, why) {
		t.Fatalf("a run that committed nothing: %v", r)
	}
	if !fwtest.Exists(dir, "blocked/x.md") || fwtest.Exists(dir, "review-needed/x.md") {
		t.Errorf("the plan should be parked in blocked/, not wait for review")
	}
	if tip := fwtest.GitOut(t, dir, "rev-parse", "feature/x"); tip != before {
		t.Errorf("feature/x moved to %s without a commit by the agent", tip)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "var", "fleet", "logs", "w1.log"))
	if !strings.Contains(string(log), why) {
		t.Errorf("the driver's log does not say why:\n%s", log)
	}
	parked := false
	for _, e := range fwtest.EventsOf(t, dir) {
		if e["event"] == "park" && e["to"] == "blocked/x.md" && strings.Contains(e["reason"].(string), why) {
			parked = true
		}
	}
	if !parked {
		t.Errorf("no park event naming the reason: %v", fwtest.EventsOf(t, dir))
	}
	if st := fwtest.StateOf(t, dir, "w1"); !strings.Contains(st.Note, why) {
		t.Errorf("the worker's state note %q does not say why", st.Note)
	}
}

// An agent that exits 0 having changed nothing says so.
func TestRunThatChangesNothingIsParked(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.md"})
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t))
	r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "w1")
	if r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, "made no commit: nothing changed") || !fwtest.Exists(dir, "blocked/x.md") {
		t.Fatalf("a run that changed nothing: %v", r)
	}
}

// Under `commit: auto` the driver commits what the agent left, as
// fleetwatch, on the plan's branch, and the plan goes on to review.
func TestRunCommitAutoCommitsTheAgentsEdits(t *testing.T) {
	t.Parallel()
	t.Run("contained", func(t *testing.T) { t.Parallel(); commitAuto(t, false) })
	t.Run("uncontained", func(t *testing.T) { t.Parallel(); commitAuto(t, true) })
}

func commitAuto(t *testing.T, uncontained bool) {
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.md"})
	if uncontained {
		fwtest.Uncontained(t, dir)
	}
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-write", "edit.txt")
	p := filepath.Join(dir, "endpoints.yaml")
	yaml, _ := os.ReadFile(p)
	auto := strings.Replace(string(yaml), "    model: fake-1\n", "    model: fake-1\n    commit: auto\n", 1)
	if err := os.WriteFile(p, []byte(auto), 0o644); err != nil {
		t.Fatal(err)
	}
	r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--endpoint", "local", "--agent-id", "w1")
	if r.Code != 0 || !fwtest.Exists(dir, "review-needed/x.md") {
		t.Fatalf("commit: auto: %v", r)
	}
	got := fwtest.GitOut(t, dir, "log", "-1", "--format=%an <%ae>|%cn|%s", "--name-only", "feature/x")
	if !strings.HasPrefix(got, "fleetwatch <fleetwatch@localhost>|fleetwatch|fleetwatch: commit w1's uncommitted edits for x") ||
		!strings.HasSuffix(got, "edit.txt") {
		t.Errorf("feature/x's tip is not fleetwatch's commit of edit.txt:\n%s", got)
	}
	wt := filepath.Join(dir, "var", "worktrees", "w1")
	if st := fwtest.GitOut(t, wt, "status", "--porcelain"); st != "" {
		t.Errorf("the worktree is not clean after the commit: %q", st)
	}
	committed := false
	for _, e := range fwtest.EventsOf(t, dir) {
		committed = committed || e["event"] == "auto-commit"
	}
	if !committed {
		t.Errorf("no auto-commit event")
	}
}
