package runtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// What an agent leaves running when it exits goes with it, within the
// grace: a process of its group that ignores SIGTERM too.
func TestRunAgentsGroupIsGoneWhenItExits(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	childPID := filepath.Join(t.TempDir(), "child.pid")
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-child", childPID, "-child-ignore-term")
	r := fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w1", "--stop-grace", "300ms")
	if r.Code != 0 {
		t.Fatalf("work-once --run: %v", r)
	}
	cpid := fwtest.ReadPID(t, childPID)
	t.Cleanup(func() { syscall.Kill(cpid, syscall.SIGKILL) })
	if fwtest.Alive(cpid) {
		t.Errorf("the agent's child %d (ignoring SIGTERM) outlived the driver", cpid)
	}
}

// A daemon that left the agent's group and session (a double fork and
// setsid) is found through the driver being a child subreaper, stopped when
// the agent exits, and does not keep the driver waiting by holding the
// agent's stdout open.
func TestRunStopsASetsidDaemonTheAgentLeft(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	tmp := t.TempDir()
	daemonPID, agentPID := filepath.Join(tmp, "daemon.pid"), filepath.Join(tmp, "agent.pid")
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-daemon", daemonPID, "-child-ignore-term", "-pidfile", agentPID, "-lines", "1")
	cmd := fwtest.Cmd(dir, nil, "work-once", "--run", "--agent-id", "w1", "--stop-grace", "500ms")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fwtest.ReadPID(t, agentPID)
	agentDone := time.Now() // the agent exits right after writing its pid
	err := cmd.Wait()
	took := time.Since(agentDone)
	dpid := fwtest.ReadPID(t, daemonPID)
	t.Cleanup(func() { syscall.Kill(dpid, syscall.SIGKILL) })
	if err != nil {
		t.Fatalf("work-once --run: %v\n%s", err, stderr.String())
	}
	if fwtest.Alive(dpid) {
		t.Errorf("the setsid daemon %d outlived the driver", dpid)
	}
	if took > 3500*time.Millisecond {
		t.Errorf("the driver took %v after its agent's end (the daemon held stdout open)", took)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "var", "fleet", "logs", "w1.log"))
	if !strings.Contains(string(log), " out line 1\n") || !strings.Contains(string(log), strconv.Itoa(dpid)) {
		t.Errorf("the log should keep the agent's output and name the daemon it stopped:\n%s", log)
	}
}

// A driver told to stop while its agent runs stops the daemon the agent
// started too, though it is in no group the driver knows.
func TestRunSIGTERMStopsTheAgentsDaemon(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	tmp := t.TempDir()
	daemonPID, agentPID := filepath.Join(tmp, "daemon.pid"), filepath.Join(tmp, "agent.pid")
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-daemon", daemonPID, "-pidfile", agentPID, "-sleep", "5m")
	cmd := fwtest.Cmd(dir, nil, "work-once", "--run", "--agent-id", "w1", "--stop-grace", "300ms")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	apid, dpid := fwtest.ReadPID(t, agentPID), fwtest.ReadPID(t, daemonPID)
	t.Cleanup(func() { syscall.Kill(dpid, syscall.SIGKILL); syscall.Kill(apid, syscall.SIGKILL) })
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != fwtest.ExitError {
		t.Fatalf("driver after SIGTERM: %v", err)
	}
	if fwtest.Alive(dpid) || fwtest.Alive(apid) {
		t.Errorf("after the driver: agent alive %v, daemon alive %v", fwtest.Alive(apid), fwtest.Alive(dpid))
	}
}

// An agent that deletes .plans/ is reported as such, and the heartbeat
// that runs on meanwhile never brings back .plans/.leases/.lock.
func TestRunAgentThatDeletesThePlanTree(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-delete-tree", "-sleep", "1500ms")
	// Contained, the agent could not delete it (EACCES); this is the
	// driver's own defence on a host without Landlock.
	fwtest.Uncontained(t, dir)
	r := fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w1", "--lease-ttl", "0.6")
	if r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, ".plans is gone: the agent deleted it") {
		t.Errorf("driver whose agent deleted the tree: %v", r)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".plans")); err == nil {
		t.Errorf("the heartbeat brought .plans/ back")
	}
	if st := fwtest.StateOf(t, dir, "w1"); !strings.Contains(st.Note, "the agent deleted it") {
		t.Errorf("state note: %q", st.Note)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "var", "fleet", "logs", "w1.log"))
	if strings.Count(string(log), "is gone (deleted by the agent?)") != 1 {
		t.Errorf("the log should say once that the tree is gone:\n%s", log)
	}
}
