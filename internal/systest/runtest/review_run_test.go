package runtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// Review of work-once --run: hostile inputs and timings.

// A lease lifetime at either end of what --lease-ttl accepts must not crash
// the driver after it has claimed: the plan would stay claimed under a lease
// of thousands of years.
func TestReviewRunExtremeLeaseTTL(t *testing.T) {
	t.Parallel()
	for _, ttl := range []string{"1e12", "1e-10"} {
		dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
		fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t))
		r := fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w1", "--lease-ttl", ttl)
		if r.Code != 0 || !fwtest.Exists(dir, "review-needed/a.md") || strings.Contains(r.Stderr, "panic") {
			t.Errorf("--lease-ttl %s: %v", ttl, r)
		}
	}
}

// An agent that deletes its plan and exits 0 has not handed it on: the run
// is not a success, and no plan path is printed for it.
func TestReviewRunAgentThatDeletesItsPlan(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-delete")
	// Contained, the agent could not delete it (EACCES); this is the
	// driver's own defence on a host without Landlock.
	fwtest.Uncontained(t, dir)
	r := fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w1")
	if r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, "in-progress/a.md is gone") || strings.Count(r.Stderr, "\n") != 1 {
		t.Fatalf("an agent that deleted its plan: %v", r)
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 1 || lines[0] != filepath.Join(dir, ".plans", "in-progress", "a.md") {
		t.Errorf("stdout should only name the claim:\n%s", r.Stdout)
	}
	if st := fwtest.StateOf(t, dir, "w1"); !strings.Contains(st.Note, "is gone") {
		t.Errorf("state note: %q", st.Note)
	}
}

// An agent that moved its plan on and then failed: the note must not claim
// the plan stays claimed.
func TestReviewRunAgentMovesItsPlanThenFails(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	exe, _ := os.Executable()
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-fw", exe, "-move", "review-needed", "-exit", "4")
	r := fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w1")
	if r.Code != fwtest.ExitError || !fwtest.Exists(dir, "review-needed/a.md") {
		t.Fatalf("%v", r)
	}
	if strings.Contains(r.Stderr, "stays claimed") || !strings.Contains(r.Stderr, "review-needed/a.md") || !strings.Contains(r.Stderr, "exited 4") {
		t.Errorf("the reason should say where the plan went: %v", r)
	}
}

// --run --ensure-worktree that cannot make the worktree must not keep the
// plan: nobody will work it, and every cron tick would strand one more plan
// for a whole lease.
func TestReviewRunWorktreeFailureGivesThePlanBack(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"}, fwtest.Plan{Rel: "features/b.md"})
	testkit.Git(t, dir, "init", "-q")
	testkit.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "init")
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t))
	// Something that is not a worktree sits where the agent's should go.
	if err := os.MkdirAll(filepath.Join(dir, "var", "worktrees", "w1"), 0o755); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "w1")
		if r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, "not a registered git worktree") || strings.Count(r.Stderr, "\n") != 1 {
			t.Fatalf("%v", r)
		}
	}
	if !fwtest.Exists(dir, "features/a.md") || !fwtest.Exists(dir, "features/b.md") {
		t.Fatal("the plans should be back in features/")
	}
	if leases, _ := filepath.Glob(filepath.Join(dir, ".plans", ".leases", "*.json")); len(leases) != 0 {
		t.Errorf("leases left behind: %v", leases)
	}
	tree, _ := planfs.Open(dir)
	events, _ := tree.Events()
	if last := events[len(events)-1]; last.Event != "release" || !strings.Contains(last.Reason, "worktree") {
		t.Errorf("the release should say why: %+v", last)
	}
	// Without --run the claim stands, as anchor's: the caller works it.
	r := fwtest.Run(t, dir, "work-once", "--once", "--ensure-worktree", "--agent-id", "w1")
	if r.Code != fwtest.ExitError || !fwtest.Exists(dir, "in-progress/a.md") {
		t.Errorf("claim-only: %v", r)
	}
}

// A driver whose stdout reader has gone (a closed pipe: an ssh session
// without a terminal that dropped, an orchestrator that died) must not be
// killed by SIGPIPE right after it claimed: it stops and gives the plan back,
// as for SIGHUP.
func TestReviewRunBrokenStdoutGivesThePlanBack(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-sleep", "5m")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	cmd := fwtest.Cmd(dir, nil, "work-once", "--run", "--agent-id", "w1", "--stop-grace", "300ms")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	err = cmd.Run()
	w.Close()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != fwtest.ExitError {
		if ok {
			if ws, _ := ee.Sys().(syscall.WaitStatus); ws.Signaled() {
				t.Fatalf("driver killed by %v\n%s", ws.Signal(), stderr.String())
			}
		}
		t.Fatalf("driver with a broken stdout: %v\n%s", err, stderr.String())
	}
	if !fwtest.Exists(dir, "features/a.md") {
		t.Errorf("the plan should be back in features/\n%s", stderr.String())
	}
	if st := fwtest.StateOf(t, dir, "w1"); st.State != look.StateExited || !strings.Contains(st.Note, "SIGPIPE") {
		t.Errorf("state: %+v", st)
	}
}

// The agent runs in its worktree (or the project root): its PWD must say
// so, not the folder the driver was started from, for tools that trust it.
func TestReviewRunAgentsPWDIsWhereItRuns(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	env, err := exec.LookPath("env")
	if err != nil {
		t.Skip("no env program")
	}
	fwtest.WithExecutor(t, dir, env)
	cmd := fwtest.Cmd(dir, []string{"PWD=" + t.TempDir()}, "work-once", "--run", "--agent-id", "w1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	log, _ := os.ReadFile(look.LogPath(dir, "w1"))
	if !strings.Contains(string(log), " out PWD="+dir+"\n") {
		t.Errorf("the agent's PWD is not %s:\n%s", dir, log)
	}
}
