package runtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// A driver stopped with SIGSTOP until its lease ran out, whose plan the
// operator then recovered under the same agent id, must not win when it
// resumes: not renew (shorten) the new lease, not move the plan on.
func TestRunStoppedDriverResumedAfterRecoverLoses(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	agentPID := filepath.Join(t.TempDir(), "agent.pid")
	// The agent finishes well (exit 0) while its driver is stopped.
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-pidfile", agentPID, "-sleep", "2s")
	cmd := fwtest.Cmd(dir, nil, "work-once", "--run", "--agent-id", "w1", "--lease-ttl", "1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	apid := fwtest.ReadPID(t, agentPID)
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	old := fwtest.RunLease(t, dir, "in-progress/a.md")
	time.Sleep(time.Until(time.Unix(0, int64(old.ExpiresAt*1e9))) + 100*time.Millisecond)
	if r := fwtest.Run(t, dir, "recover", "--agent-id", "w1", "--lease-ttl", "3600", "a"); r.Code != 0 {
		t.Fatalf("recover under the same id while the driver is stopped: %v", r)
	}
	fresh := fwtest.RunLease(t, dir, "in-progress/a.md")
	if fresh.Token == old.Token {
		t.Fatal("recover kept the old token")
	}
	// The agent exits meanwhile (a zombie until its driver runs again).
	fwtest.WaitFor(t, "the agent to finish", 10*time.Second, func() bool { return !fwtest.Alive(apid) || fwtest.Zombie(apid) })
	cmd.Process.Signal(syscall.SIGCONT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != fwtest.ExitError {
		t.Fatalf("the resumed driver should fail (exit 2): %v\n%s", err, stderr.String())
	}
	if !fwtest.Exists(dir, "in-progress/a.md") || fwtest.Exists(dir, "review-needed/a.md") {
		t.Fatalf("the resumed driver moved the recovered plan\n%s", stderr.String())
	}
	if got := fwtest.RunLease(t, dir, "in-progress/a.md"); got.Token != fresh.Token || got.ExpiresAt < fresh.ExpiresAt {
		t.Fatalf("the new lease was changed by the stale driver: %+v, was %+v", got, fresh)
	}
	if !strings.Contains(stderr.String(), "newer lease") {
		t.Errorf("the driver should say its lease was lost to a newer one:\n%s", stderr.String())
	}
}

// An operator who parks, completes or returns a plan a driver works, with
// --force, stops that agent within one heartbeat pulse, as release does.
func TestRunForcedMoveByAnOperatorStopsTheAgent(t *testing.T) {
	t.Parallel()
	for verb, args := range map[string][]string{
		"park":     {"park", "--force", "--to", "blocked", "a"},
		"complete": {"complete", "--force", "--to", "completed", "a"},
		"return":   {"return", "--force", "a"},
	} {
		t.Run(verb, func(t *testing.T) {
			t.Parallel()
			dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
			agentPID := filepath.Join(t.TempDir(), "agent.pid")
			fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-pidfile", agentPID, "-sleep", "5m")
			// A pulse every second: the lease is renewed every TTL/3.
			cmd := fwtest.Cmd(dir, nil, "work-once", "--run", "--agent-id", "w1", "--lease-ttl", "3", "--stop-grace", "300ms")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			apid := fwtest.ReadPID(t, agentPID)
			r := fwtest.Run(t, dir, args...)
			if r.Code != 0 {
				t.Fatalf("operator %s: %v", verb, r)
			}
			moved := strings.TrimSpace(r.Stdout)
			start := time.Now()
			err := cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != fwtest.ExitError || !strings.Contains(stderr.String(), "by operator-tester") {
				t.Fatalf("driver whose plan the operator moved: %v\n%s", err, stderr.String())
			}
			if d := time.Since(start); d > 4*time.Second {
				t.Errorf("the agent ran on %v after the operator's %s", d, verb)
			}
			fwtest.WaitFor(t, "the agent to stop", 5*time.Second, func() bool { return !fwtest.Alive(apid) })
			if _, err := os.Stat(moved); err != nil {
				t.Errorf("the plan should stay where the operator put it (%s): %v", moved, err)
			}
		})
	}
}

// Operator verbs act as operator-$USER, not as the worker id work-once
// uses by default: an operator's release without --force is refused on a
// worker's claim, and the event log says who acted.
func TestOperatorVerbsDefaultToAnOperatorID(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	if r := fwtest.Run(t, dir, "work-once"); r.Code != 0 { // work-once-tester claims it
		t.Fatalf("claim: %v", r)
	}
	if r := fwtest.Run(t, dir, "release", "a"); r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, "owned by work-once-tester") {
		t.Fatalf("an operator's release of a worker's claim without --force: %v", r)
	}
	if r := fwtest.RunEnv(t, dir, []string{"FLEET_AGENT_ID=work-once-tester"}, "release", "a"); r.Code != 0 {
		t.Fatalf("the agent's own release, as $FLEET_AGENT_ID: %v", r)
	}
	if r := fwtest.Run(t, dir, "work-once"); r.Code != 0 {
		t.Fatalf("claim: %v", r)
	}
	if r := fwtest.Run(t, dir, "complete", "--force", "a"); r.Code != 0 {
		t.Fatalf("forced complete: %v", r)
	}
	tree, _ := planfs.Open(dir)
	events, _ := tree.Events()
	if last := events[len(events)-1]; last.AgentID != "operator-tester" || !last.Forced {
		t.Errorf("the event should name the operator and say it was forced: %+v", last)
	}
}

// A verb an agent runs in its worktree acts on the main project's .plans/,
// not on the copy committed into the worktree; $FLEET_LEASE_TOKEN proves
// it holds the lease.
func TestVerbInAWorktreeActsOnTheMainTree(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	r := fwtest.Run(t, dir, "work-once", "--agent-id", "w1")
	if r.Code != 0 {
		t.Fatalf("claim: %v", r)
	}
	token := fwtest.RunLease(t, dir, "in-progress/a.md").Token
	wt := filepath.Join(dir, "var", "worktrees", "w1")
	copyTree := fwtest.NewTree(t, fwtest.Plan{Rel: "in-progress/a.md"}) // the committed copy, stale
	if err := os.MkdirAll(filepath.Dir(wt), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(copyTree, wt); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(wt, "src")
	os.MkdirAll(sub, 0o755)
	// Another id, but the lease's token: the token decides.
	r = fwtest.RunEnv(t, sub, []string{"FLEET_LEASE_TOKEN=" + token}, "complete", "--agent-id", "someone", "--to", "review-needed", "a")
	if r.Code != 0 {
		t.Fatalf("complete from the worktree: %v", r)
	}
	if !fwtest.Exists(dir, "review-needed/a.md") {
		t.Errorf("the main tree's plan did not move: %v", r)
	}
	if _, err := os.Stat(filepath.Join(wt, ".plans", "in-progress", "a.md")); err != nil {
		t.Errorf("the worktree's copy was touched: %v", err)
	}
}

// A token that is not the lease's is refused, even with the holder's id.
func TestVerbWithAStaleTokenIsRefused(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	if r := fwtest.Run(t, dir, "work-once", "--agent-id", "w1"); r.Code != 0 {
		t.Fatalf("claim: %v", r)
	}
	r := fwtest.RunEnv(t, dir, []string{"FLEET_LEASE_TOKEN=00000000deadbeef"}, "complete", "--agent-id", "w1", "a")
	if r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, "newer lease") {
		t.Fatalf("complete with a stale token: %v", r)
	}
	if r := fwtest.Run(t, dir, "work-once", "--agent-id", "w1", "--token", "00000000deadbeef", "--heartbeat", "in-progress/a.md"); r.Code != fwtest.ExitError {
		t.Fatalf("heartbeat with a stale token: %v", r)
	}
	if !fwtest.Exists(dir, "in-progress/a.md") {
		t.Fatal("a stale token moved the plan")
	}
}
