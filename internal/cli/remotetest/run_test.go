package remotetest

import (
	"os/exec"
	"strings"
	"testing"

	"fleetwatch/internal/testkit/fwtest"
)

// TestRunThroughGit runs `work-once --claims git --run` with the fake agent:
// the plan ends in review-needed on the remote's main, its lease ref is
// gone, and the agent's commit is on the remote's feature/<slug>.
func TestRunThroughGit(t *testing.T) {
	f := newFleet(t, plans(1)...)
	a := f.clone(t, f.bare)
	needBackend(t, a)
	fwtest.WithExecutor(t, a, fwtest.FakeAgent(t), "-sleep", "100ms", "-commit")
	r := fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "runner", "--run", "--once")
	if r.Code != 0 {
		t.Fatalf("--run: %v", r)
	}
	if !strings.Contains(r.Stdout, "review-needed/p000.md") {
		t.Errorf("--run printed no review-needed path:\n%s", r.Stdout)
	}
	files := gitIn(t, f.bare, nil, "ls-tree", "-r", "--name-only", "main")
	if !strings.Contains(files, ".plans/review-needed/p000.md") || strings.Contains(files, ".plans/bugs/p000.md") {
		t.Errorf("the remote's main after --run:\n%s", files)
	}
	if refs := f.leases(t); len(refs) != 0 {
		t.Errorf("lease refs left after --run: %v", refs)
	}
	if err := exec.Command("git", "-C", f.bare, "rev-parse", "--verify", "refs/heads/feature/p000").Run(); err != nil {
		t.Errorf("feature/p000 was not pushed to the remote: %v", err)
	}
	// A second machine sees it done, and claims nothing.
	b := f.clone(t, f.bare)
	fwtest.Want(t, fwtest.Run(t, b, "work-once", "--root", b, "--agent-id", "other", "--once"), 1)
}
