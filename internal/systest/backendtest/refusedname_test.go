package backendtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// A plan whose name the `worktree: env` template refuses (a value holding
// both ' and $ has no literal dotenv spelling) is first in pick order: the
// run skips it saying why, works the next plan, and --list shows why; the
// refused plan stays where it was, unclaimed, for every worker after.
func TestARefusedPlanNameNeverStallsTheFleet(t *testing.T) {
	t.Parallel()
	bad := "bugs/won't-$pay.md"
	dir := fwtest.GitProject(t,
		fwtest.Plan{Rel: bad, Fields: "Priority: P1"},
		fwtest.Plan{Rel: "features/next.md"})
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-commit")
	yaml := "worktree:\n  env:\n    NOTE: \"work on {slug}\"\n"
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}

	r := fwtest.Run(t, dir, "work-once", "--list", "--ensure-worktree")
	fwtest.Want(t, r, fwtest.ExitOK)
	if !strings.Contains(r.Stderr, "# cannot be claimed (skipped):\n#   "+bad+"  fleetwatch.yaml's worktree: env refuses its name") {
		t.Errorf("--list does not say why %s is skipped:\n%s", bad, r.Stderr)
	}

	for _, agent := range []string{"A", "B"} {
		r = fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", agent)
		if agent == "A" {
			fwtest.Want(t, r, fwtest.ExitOK)
			if !strings.Contains(r.Stdout, "/next.md") || strings.Contains(r.Stdout, "pay") {
				t.Errorf("A did not work next.md alone: %v", r)
			}
		} else {
			fwtest.Want(t, r, fwtest.ExitNothing)
		}
		if !strings.Contains(r.Stderr, "fleetwatch: skipped "+bad+": fleetwatch.yaml's worktree: env refuses its name: fleetwatch.yaml:3: worktree: env: NOTE:") {
			t.Errorf("%s's run does not say why it skipped %s: %v", agent, bad, r)
		}
	}
	if !fwtest.Exists(dir, bad) || fwtest.Exists(dir, "features/next.md") {
		t.Errorf("tree: %v", fwtest.SortedKeys(fwtest.Contents(t, dir)))
	}
}
