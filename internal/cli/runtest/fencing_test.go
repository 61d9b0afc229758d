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

	"fleetwatch/planfs"
)

// A driver stopped with SIGSTOP until its lease ran out, whose plan the
// operator then recovered under the same agent id, must not win when it
// resumes: not renew (shorten) the new lease, not move the plan on.
func TestRunStoppedDriverResumedAfterRecoverLoses(t *testing.T) {
	t.Parallel()
	dir := newTree(t, plan{rel: "features/a.md"})
	agentPID := filepath.Join(t.TempDir(), "agent.pid")
	// The agent finishes well (exit 0) while its driver is stopped.
	withExecutor(t, dir, fakeAgent(t), "-pidfile", agentPID, "-sleep", "2s")
	cmd := fwCmd(dir, nil, "work-once", "--run", "--agent-id", "w1", "--lease-ttl", "1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	apid := readPID(t, agentPID)
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	old := runLease(t, dir, "in-progress/a.md")
	time.Sleep(time.Until(time.Unix(0, int64(old.ExpiresAt*1e9))) + 100*time.Millisecond)
	if r := fw(t, dir, "recover", "--agent-id", "w1", "--lease-ttl", "3600", "a"); r.code != 0 {
		t.Fatalf("recover under the same id while the driver is stopped: %v", r)
	}
	fresh := runLease(t, dir, "in-progress/a.md")
	if fresh.Token == old.Token {
		t.Fatal("recover kept the old token")
	}
	// The agent exits meanwhile (a zombie until its driver runs again).
	waitFor(t, "the agent to finish", 10*time.Second, func() bool { return !alive(apid) || zombie(apid) })
	cmd.Process.Signal(syscall.SIGCONT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitError {
		t.Fatalf("the resumed driver should fail (exit 2): %v\n%s", err, stderr.String())
	}
	if !exists(dir, "in-progress/a.md") || exists(dir, "review-needed/a.md") {
		t.Fatalf("the resumed driver moved the recovered plan\n%s", stderr.String())
	}
	if got := runLease(t, dir, "in-progress/a.md"); got.Token != fresh.Token || got.ExpiresAt < fresh.ExpiresAt {
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
			dir := newTree(t, plan{rel: "features/a.md"})
			agentPID := filepath.Join(t.TempDir(), "agent.pid")
			withExecutor(t, dir, fakeAgent(t), "-pidfile", agentPID, "-sleep", "5m")
			// A pulse every second: the lease is renewed every TTL/3.
			cmd := fwCmd(dir, nil, "work-once", "--run", "--agent-id", "w1", "--lease-ttl", "3", "--stop-grace", "300ms")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			apid := readPID(t, agentPID)
			r := fw(t, dir, args...)
			if r.code != 0 {
				t.Fatalf("operator %s: %v", verb, r)
			}
			moved := strings.TrimSpace(r.stdout)
			start := time.Now()
			err := cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitError || !strings.Contains(stderr.String(), "by operator-tester") {
				t.Fatalf("driver whose plan the operator moved: %v\n%s", err, stderr.String())
			}
			if d := time.Since(start); d > 4*time.Second {
				t.Errorf("the agent ran on %v after the operator's %s", d, verb)
			}
			waitFor(t, "the agent to stop", 5*time.Second, func() bool { return !alive(apid) })
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
	dir := newTree(t, plan{rel: "features/a.md"})
	if r := fw(t, dir, "work-once"); r.code != 0 { // work-once-tester claims it
		t.Fatalf("claim: %v", r)
	}
	if r := fw(t, dir, "release", "a"); r.code != exitError || !strings.Contains(r.stderr, "owned by work-once-tester") {
		t.Fatalf("an operator's release of a worker's claim without --force: %v", r)
	}
	if r := fwEnv(t, dir, []string{"FLEET_AGENT_ID=work-once-tester"}, "release", "a"); r.code != 0 {
		t.Fatalf("the agent's own release, as $FLEET_AGENT_ID: %v", r)
	}
	if r := fw(t, dir, "work-once"); r.code != 0 {
		t.Fatalf("claim: %v", r)
	}
	if r := fw(t, dir, "complete", "--force", "a"); r.code != 0 {
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
	dir := newTree(t, plan{rel: "features/a.md"})
	r := fw(t, dir, "work-once", "--agent-id", "w1")
	if r.code != 0 {
		t.Fatalf("claim: %v", r)
	}
	token := runLease(t, dir, "in-progress/a.md").Token
	wt := filepath.Join(dir, "var", "worktrees", "w1")
	copyTree := newTree(t, plan{rel: "in-progress/a.md"}) // the committed copy, stale
	if err := os.MkdirAll(filepath.Dir(wt), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(copyTree, wt); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(wt, "src")
	os.MkdirAll(sub, 0o755)
	// Another id, but the lease's token: the token decides.
	r = fwEnv(t, sub, []string{"FLEET_LEASE_TOKEN=" + token}, "complete", "--agent-id", "someone", "--to", "review-needed", "a")
	if r.code != 0 {
		t.Fatalf("complete from the worktree: %v", r)
	}
	if !exists(dir, "review-needed/a.md") {
		t.Errorf("the main tree's plan did not move: %v", r)
	}
	if _, err := os.Stat(filepath.Join(wt, ".plans", "in-progress", "a.md")); err != nil {
		t.Errorf("the worktree's copy was touched: %v", err)
	}
}

// A token that is not the lease's is refused, even with the holder's id.
func TestVerbWithAStaleTokenIsRefused(t *testing.T) {
	t.Parallel()
	dir := newTree(t, plan{rel: "features/a.md"})
	if r := fw(t, dir, "work-once", "--agent-id", "w1"); r.code != 0 {
		t.Fatalf("claim: %v", r)
	}
	r := fwEnv(t, dir, []string{"FLEET_LEASE_TOKEN=00000000deadbeef"}, "complete", "--agent-id", "w1", "a")
	if r.code != exitError || !strings.Contains(r.stderr, "newer lease") {
		t.Fatalf("complete with a stale token: %v", r)
	}
	if r := fw(t, dir, "work-once", "--agent-id", "w1", "--token", "00000000deadbeef", "--heartbeat", "in-progress/a.md"); r.code != exitError {
		t.Fatalf("heartbeat with a stale token: %v", r)
	}
	if !exists(dir, "in-progress/a.md") {
		t.Fatal("a stale token moved the plan")
	}
}
