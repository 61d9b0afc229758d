package workers

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/seat"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// Agents can write the shared git dir: its hooks, fsmonitor, external diff
// and textconv drivers must never run in what fleetwatch runs as the
// operator: worktrees made, branches handed over, diffs, status, the
// overlap radar, removal.
func TestGitRunsNoRepositoryCode(t *testing.T) {
	dir := testkit.Repo(t)
	os.WriteFile(filepath.Join(dir, "shared.go"), []byte("package x\n\nfunc A() {}\n"), 0o644)
	testkit.Git(t, dir, "add", "shared.go")
	testkit.Git(t, dir, "commit", "-q", "-m", "shared")
	ran := testkit.HostileGitConfig(t, dir)

	a, err := seat.Ensure(dir, "a", "plan-a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := seat.Ensure(dir, "b", "plan-b")
	if err != nil {
		t.Fatal(err)
	}
	testkit.NothingRan(t, ran, "Ensure")

	// The agents' own work; their git may run what it likes.
	os.WriteFile(filepath.Join(a.Path, "shared.go"), []byte("package x\n\nfunc A() { println(1) }\n"), 0o644)
	testkit.Git(t, a.Path, "commit", "-q", "-am", "a's change")
	os.WriteFile(filepath.Join(a.Path, "scratch.txt"), []byte("uncommitted\n"), 0o644)
	os.WriteFile(filepath.Join(b.Path, "shared.go"), []byte("package x\n\nfunc A() { println(2) }\n"), 0o644)
	os.WriteFile(ran, nil, 0o644)

	if _, err := look.DiffOfPlan(dir, "plan-a"); err != nil {
		t.Fatal(err)
	}
	if _, err := look.DiffOfWorktree(dir, b.Path); err != nil {
		t.Fatal(err)
	}
	for _, st := range look.Inspect(dir, []tree.Worktree{a, b}) {
		if st.Err != "" {
			t.Fatal(st.Err)
		}
	}
	if _, err := look.ReadWorktreeDetail(dir, "a"); err != nil {
		t.Fatal(err)
	}
	if o := look.Overlaps(dir, []look.State{runningState("a", a.Path, "shared.go"), runningState("b", b.Path, "shared.go")}); len(o) != 1 || !o[0].Checked {
		t.Fatalf("overlaps %+v", o)
	}
	testkit.NothingRan(t, ran, "diff, status and the overlap radar")

	// c takes plan-a over from a, whose uncommitted file is kept first.
	if c, err := seat.Ensure(dir, "c", "plan-a"); err != nil || c.HandOff == nil || c.HandOff.KeepRef == "" {
		t.Fatalf("hand-off: %+v %v", c.HandOff, err)
	}
	if _, err := seat.Remove(dir, "b", true, true); err != nil {
		t.Fatal(err)
	}
	testkit.NothingRan(t, ran, "a hand-off and a removal")
}

// The scope scanner's git status and diffs run no repository code either.
func TestScopeScannerRunsNoRepositoryCode(t *testing.T) {
	t.Parallel()
	g := newScopeRig(t)
	ran := testkit.HostileGitConfig(t, g.dir)
	// The agent commits with everything off, so that only fleetwatch's own
	// git can fill the sentinel.
	git := `git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c user.name=a -c user.email=a@example.com -c commit.gpgsign=false`
	_, _ = g.run(t, Job{Scope: &model.Scope{Patterns: []string{"src/"}}}, `mkdir -p src && echo a > src/a.go && `+git+` add src && `+git+` commit -q -m work && echo n > notes.txt && sleep 30`)
	g.waitState(t, "the scan", func(st look.State) bool { return len(st.Violations) > 0 && len(st.Touched) == 2 })
	// A few more scans.
	time.Sleep(3 * scanEvery)
	testkit.NothingRan(t, ran, "the scope scanner")
}
