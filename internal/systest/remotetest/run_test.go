package remotetest

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// TestRunThroughGit runs `work-once --claims git --run` with the fake agent:
// the plan ends in review-needed on the remote's main, its lease ref is
// gone, and the agent's commit is on the remote's feature/<slug>.
func TestRunThroughGit(t *testing.T) {
	t.Parallel()
	f := NewFleet(t, Plans(1)...)
	a := f.Clone(t, f.Bare)
	NeedBackend(t, a)
	fwtest.WithExecutor(t, a, fwtest.FakeAgent(t), "-sleep", "100ms", "-commit")
	r := fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "runner", "--run", "--once")
	if r.Code != 0 {
		t.Fatalf("--run: %v", r)
	}
	if !strings.Contains(r.Stdout, "review-needed/p000.md") {
		t.Errorf("--run printed no review-needed path:\n%s", r.Stdout)
	}
	files := gitIn(t, f.Bare, nil, "ls-tree", "-r", "--name-only", "main")
	if !strings.Contains(files, ".plans/review-needed/p000.md") || strings.Contains(files, ".plans/bugs/p000.md") {
		t.Errorf("the remote's main after --run:\n%s", files)
	}
	if refs := f.Leases(t); len(refs) != 0 {
		t.Errorf("lease refs left after --run: %v", refs)
	}
	if err := exec.Command("git", "-C", f.Bare, "rev-parse", "--verify", "refs/heads/feature/p000").Run(); err != nil {
		t.Errorf("feature/p000 was not pushed to the remote: %v", err)
	}
	// A second machine sees it done, and claims nothing.
	b := f.Clone(t, f.Bare)
	fwtest.Want(t, fwtest.Run(t, b, "work-once", "--root", b, "--agent-id", "other", "--once"), 1)
}

// TestAgentParksThroughGit: an agent whose claim is on the git remote parks
// its own plan through its driver (`fleetwatch park`): the plan is in
// blocked/ on the remote's main with the agent's reason, its lease ref is
// gone in the same push, and the driver reports the park, not a lost lease.
func TestAgentParksThroughGit(t *testing.T) {
	t.Parallel()
	f := NewFleet(t, Plans(1)...)
	a := f.Clone(t, f.Bare)
	NeedBackend(t, a)
	script := `"$1" park "$FLEET_PLAN" --to blocked --reason "needs a human: the API key is missing"`
	fwtest.WithExecutor(t, a, "sh", "-c", script, "agent", fwtest.Exe(t))
	r := fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "parker", "--run", "--once")
	if strings.Contains(r.Stdout+r.Stderr, "lease lost") {
		t.Errorf("the driver took its agent's park for a lost lease: %v", r)
	}
	files := gitIn(t, f.Bare, nil, "ls-tree", "-r", "--name-only", "main")
	if !strings.Contains(files, ".plans/blocked/p000.md") || strings.Contains(files, ".plans/bugs/p000.md") {
		log, _ := os.ReadFile(look.LogPath(a, "parker"))
		t.Fatalf("the remote's main after the agent's park:\n%s\n%v\nlog:\n%s", files, r, log)
	}
	if msg := gitIn(t, f.Bare, nil, "log", "-1", "--format=%B", "main"); !strings.Contains(msg, "the API key is missing") {
		t.Errorf("the park's commit does not give the agent's reason:\n%s", msg)
	}
	if refs := f.Leases(t); len(refs) != 0 {
		t.Errorf("lease refs left after the park: %v", refs)
	}
	if !strings.Contains(r.Stdout, "blocked/p000.md") {
		t.Errorf("the driver did not report where the plan went: %v", r)
	}
}

// TestRunWithoutACommitIsParkedOnGit: a run whose agent exits 0 without a
// commit parks its plan in blocked/ on the remote's main, with the reason,
// in the same push that drops its lease.
func TestRunWithoutACommitIsParkedOnGit(t *testing.T) {
	t.Parallel()
	f := NewFleet(t, Plans(1)...)
	a := f.Clone(t, f.Bare)
	NeedBackend(t, a)
	fwtest.WithExecutor(t, a, fwtest.FakeAgent(t), "-sleep", "100ms", "-write", "notes.txt")
	r := fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "idle", "--run", "--once")
	fwtest.Want(t, r, 2)
	files := gitIn(t, f.Bare, nil, "ls-tree", "-r", "--name-only", "main")
	if !strings.Contains(files, ".plans/blocked/p000.md") || strings.Contains(files, ".plans/bugs/p000.md") {
		t.Fatalf("the remote's main after a run with no commit:\n%s\n%v", files, r)
	}
	if msg := gitIn(t, f.Bare, nil, "log", "-1", "--format=%B", "main"); !strings.Contains(msg, "made no commit: 1 file changed, not committed") {
		t.Errorf("the park's commit does not say why:\n%s", msg)
	}
	if refs := f.Leases(t); len(refs) != 0 {
		t.Errorf("lease refs left after the park: %v", refs)
	}
}
