package runtest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

func TestRunPlaceholdersReachTheAgentIntact(t *testing.T) {
	t.Parallel()
	// A project path, agent id and model with blanks, quotes and shell
	// characters: each must arrive as exactly one argument.
	dir := filepath.Join(t.TempDir(), `my "odd" project's $HOME`)
	if r := fwtest.Run(t, t.TempDir(), "scaffold", dir); r.Code != 0 {
		t.Fatalf("scaffold: %v", r)
	}
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "features/fix-it.md", Fields: "Priority: P1"}, time.Minute)
	rec := filepath.Join(t.TempDir(), "rec.json")
	yaml := "endpoints:\n  - name: box\n    tier: reasoner\n    base_url: 'http://127.0.0.1:8001/v1?a=1&b=2'\n    model: 'gpt \"4\" o; rm -rf'\n" +
		"    sandbox_write: [" + strconv.Quote(filepath.Dir(rec)) + "]\n" +
		"    command: [" + strconv.Quote(fwtest.FakeAgent(t)) + ", -record, " + strconv.Quote(rec) + ", --, '{plan}', '{agent_id}', '{model}', '{base_url}', '{port}', '{slug}', '{worktree}', 'x={slug}-{agent_id}', '{unknown}']\n"
	if err := os.WriteFile(filepath.Join(dir, "endpoints.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	agent := `ag "1" $(x) 'y'`
	r := fwtest.Run(t, dir, "work-once", "--root", dir, "--run", "--endpoint", "box", "--agent-id", agent)
	if r.Code != 0 {
		t.Fatalf("work-once --run: %v", r)
	}
	var got struct {
		Args []string
		Env  map[string]string
		Cwd  string
	}
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	planPath := filepath.Join(dir, ".plans", "in-progress", "fix-it.md")
	// {base_url} is the run's metering proxy, with the endpoint's path and
	// query (docs/spend.md), never the endpoint itself.
	model, url := `gpt "4" o; rm -rf`, got.Env["FLEET_BASE_URL"]
	if !regexp.MustCompile(`^http://127\.0\.0\.1:[0-9]+/v1\?a=1&b=2$`).MatchString(url) || strings.Contains(url, ":8001/") {
		t.Errorf("FLEET_BASE_URL = %q, want the metering proxy's address with /v1?a=1&b=2", url)
	}
	port := got.Env["FLEET_PORT"]
	want := []string{"-record", rec, "--", planPath, agent, model, url, port, "fix-it", dir, "x=fix-it-" + agent, "{unknown}"}
	if !reflect.DeepEqual(got.Args, want) {
		t.Errorf("argv:\n got %q\nwant %q", got.Args, want)
	}
	token := got.Env["FLEET_LEASE_TOKEN"]
	if len(token) != 16 {
		t.Errorf("FLEET_LEASE_TOKEN = %q, want the lease's 16-digit token", token)
	}
	// The driver moved the plan under that very lease.
	if events := fwtest.ReadRel(t, dir, "logs/events.jsonl"); !strings.Contains(events, `"event":"complete"`) || !strings.Contains(events, `"lease":"`+token+`"`) {
		t.Errorf("no complete event under lease %s:\n%s", token, events)
	}
	wantEnv := map[string]string{"FLEET_PLAN": planPath, "FLEET_AGENT_ID": agent, "FLEET_MODEL": model, "FLEET_BASE_URL": url,
		"FLEET_PORT": port, "FLEET_SLUG": "fix-it", "FLEET_MODE": "build", "FLEET_PROJECT": filepath.Base(dir), "FLEET_WORKTREE": dir, "FLEET_ROOT": dir, "FLEET_LEASE_TOKEN": token,
		"FLEET_SOCKET": got.Env["FLEET_SOCKET"], "FLEET_USAGE": got.Env["FLEET_USAGE"], "FLEET_BIN": fwtest.Exe(t)}
	if !strings.HasSuffix(got.Env["FLEET_USAGE"], "/out/usage.jsonl") {
		t.Errorf("FLEET_USAGE = %q, want a file in the run's own folder", got.Env["FLEET_USAGE"])
	}
	if !strings.HasSuffix(got.Env["FLEET_SOCKET"], "/sock") {
		t.Errorf("FLEET_SOCKET = %q, want the driver's socket", got.Env["FLEET_SOCKET"])
	}
	if !reflect.DeepEqual(got.Env, wantEnv) {
		t.Errorf("env:\n got %q\nwant %q", got.Env, wantEnv)
	}
	if got.Cwd != dir {
		t.Errorf("the agent ran in %q, want the project root %q", got.Cwd, dir)
	}
	// Exit 0 without moving the plan: the driver hands it to review.
	if !fwtest.Exists(dir, "review-needed/fix-it.md") {
		t.Errorf("plan not in review-needed/: %v", r)
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 2 || lines[0] != planPath || lines[1] != filepath.Join(dir, ".plans", "review-needed", "fix-it.md") {
		t.Errorf("stdout should name the claim and where the plan went:\n%s", r.Stdout)
	}
	st := fwtest.StateOf(t, dir, agent)
	if st.State != look.StateExited || st.ExitCode == nil || *st.ExitCode != 0 || st.Tier != "reasoner" || st.Model != model ||
		st.Endpoint != "box" || st.Plan != "in-progress/fix-it.md" || st.AgentID != agent {
		t.Errorf("state file: %+v", st)
	}
}

func TestRunLogsTheAgentsOutputTimestamped(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-lines", "3", "-stderr", "warning: careful")
	r := fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w1")
	if r.Code != 0 {
		t.Fatalf("work-once --run: %v", r)
	}
	data, err := os.ReadFile(filepath.Join(dir, "var", "fleet", "logs", "w1.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(data)
	for _, want := range []string{" out line 1\n", " out line 3\n", " err warning: careful\n", " fleet claimed", " fleet run ", " fleet exit 0: "} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		stamp, _, _ := strings.Cut(line, " ")
		if _, err := time.Parse(time.RFC3339Nano, stamp); err != nil {
			t.Errorf("line without a timestamp: %q", line)
		}
	}
	// var/fleet keeps itself out of git.
	if ig, err := os.ReadFile(filepath.Join(dir, "var", "fleet", ".gitignore")); err != nil || !strings.Contains(string(ig), "*") {
		t.Errorf("var/fleet/.gitignore: %q %v", ig, err)
	}
}

func TestRunHeartbeatRenewsWhileTheAgentRunsAndStopsWhenItDies(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-sleep", "2500ms", "-exit", "3")
	cmd := fwtest.Cmd(dir, nil, "work-once", "--run", "--agent-id", "w1", "--lease-ttl", "1.5")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Without heartbeats the lease would run out 1.5 s after the claim;
	// 2 s in, it has been renewed.
	time.Sleep(2 * time.Second)
	l := fwtest.RunLease(t, dir, "in-progress/a.md")
	if l.ExpiresAt-l.ClaimedAt < 1.9 {
		t.Errorf("lease not renewed while the agent ran: claimed %.2f expires %.2f", l.ClaimedAt, l.ExpiresAt)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != fwtest.ExitError || !strings.Contains(stderr.String(), "agent exited 3") {
		t.Fatalf("a failing agent is exit 2 with a reason: %v\n%s", err, stderr.String())
	}
	// A failed task is handed back at once, its failure counted.
	if !fwtest.Exists(dir, "features/a.md") || !strings.Contains(stderr.String(), "task failure 1 of 3") {
		t.Fatalf("a failed run must hand its plan back at once:\n%s", stderr.String())
	}
	st := fwtest.StateOf(t, dir, "w1")
	if st.State != look.StateExited || st.ExitCode == nil || *st.ExitCode != fwtest.ExitError || !strings.Contains(st.Note, "exited 3") {
		t.Errorf("state file: %+v", st)
	}
}

func TestRunSIGTERMStopsTheAgentAndReleasesThePlan(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/crash.md"})
	tmp := t.TempDir()
	agentPID, childPID := filepath.Join(tmp, "agent.pid"), filepath.Join(tmp, "child.pid")
	// The agent ignores SIGTERM and has a child of its own: both must go.
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-ignore-term", "-child", childPID, "-pidfile", agentPID, "-sleep", "5m")
	cmd := fwtest.Cmd(dir, nil, "work-once", "--run", "--agent-id", "w1", "--stop-grace", "300ms")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	apid, cpid := fwtest.ReadPID(t, agentPID), fwtest.ReadPID(t, childPID)
	if st := fwtest.StateOf(t, dir, "w1"); st.State != look.StateRunning || st.Plan != "in-progress/crash.md" || st.PID != cmd.Process.Pid {
		t.Errorf("state while running: %+v", st)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != fwtest.ExitError {
		t.Fatalf("driver after SIGTERM: %v\n%s", err, stderr.String())
	}
	if !fwtest.Exists(dir, "bugs/crash.md") || fwtest.Exists(dir, "in-progress/crash.md") {
		t.Errorf("the plan should be back in bugs/\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, ".plans", ".leases", "in-progress__crash.md.json")); err == nil {
		t.Error("lease left behind")
	}
	fwtest.WaitFor(t, "the agent and its child to be gone", 5*time.Second, func() bool { return !fwtest.Alive(apid) && !fwtest.Alive(cpid) })
	t0 := time.Now()
	tree, _ := planfs.Open(dir)
	events, _ := tree.Events()
	last := events[len(events)-1]
	if last.Event != "release" || last.To != "bugs/crash.md" || !strings.Contains(last.Reason, "SIGTERM") {
		t.Errorf("the release should say why: %+v", last)
	}
	st := fwtest.StateOf(t, dir, "w1")
	if st.State != look.StateExited || !strings.Contains(st.Note, "SIGTERM") {
		t.Errorf("state after stop: %+v", st)
	}
	_ = t0
}

func TestRunKill9OfTheDriverLeavesALeaseThatExpires(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	agentPID := filepath.Join(t.TempDir(), "agent.pid")
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-pidfile", agentPID, "-sleep", "5m")
	cmd := fwtest.Cmd(dir, nil, "work-once", "--run", "--agent-id", "w1", "--lease-ttl", "3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	apid := fwtest.ReadPID(t, agentPID)
	cmd.Process.Kill()
	cmd.Wait()
	// The agent hears of its driver's death instead of working on unleased.
	fwtest.WaitFor(t, "the orphaned agent to stop", 5*time.Second, func() bool { return !fwtest.Alive(apid) })
	if !fwtest.Exists(dir, "in-progress/a.md") {
		t.Fatal("kill -9 must leave the plan claimed")
	}
	l := fwtest.RunLease(t, dir, "in-progress/a.md")
	if r := fwtest.Run(t, dir, "work-once", "--recover", "--slug", "a", "--agent-id", "w2"); r.Code != fwtest.ExitError {
		t.Errorf("a live lease cannot be recovered yet: %v", r)
	}
	time.Sleep(time.Until(time.Unix(0, int64(l.ExpiresAt*1e9))) + 100*time.Millisecond)
	if r := fwtest.Run(t, dir, "work-once", "--recover", "--slug", "a", "--agent-id", "w2"); r.Code != 0 {
		t.Fatalf("recover after expiry: %v", r)
	}
	// The state file still says running; its process is gone, so it is dead.
	if h := fwtest.StateOf(t, dir, "w1").Health(time.Now()); h != look.Dead {
		t.Errorf("health of a killed driver: %s", h)
	}
}

// kill -9 of the driver and its supervisor leaves the agent's grandchild
// (in its group) and a daemon it started (setsid, outside the group)
// running; neither may work on once the plan changes hands: recover stops
// both first, checked by pid and start time.
func TestRecoverStopsWhatAKilledDriverLeftRunning(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	pids := t.TempDir()
	child, daemon := filepath.Join(pids, "child.pid"), filepath.Join(pids, "daemon.pid")
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-child", child, "-daemon", daemon, "-sleep", "5m")
	cmd := fwtest.Cmd(dir, nil, "work-once", "--run", "--agent-id", "w1", "--lease-ttl", "3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cpid, dpid := fwtest.ReadPID(t, child), fwtest.ReadPID(t, daemon)
	t.Cleanup(func() { syscall.Kill(cpid, syscall.SIGKILL); syscall.Kill(dpid, syscall.SIGKILL) })
	// The driver records the daemon it adopted at its next pulse.
	fwtest.WaitFor(t, "the daemon in the state file", 10*time.Second, func() bool {
		for _, p := range fwtest.StateOf(t, dir, "w1").Adopted {
			if p.PID == dpid {
				return true
			}
		}
		return false
	})
	// Its supervisor would stop the run before the recover does.
	killSupervisor(t, dir)
	cmd.Process.Kill()
	cmd.Wait()
	time.Sleep(300 * time.Millisecond)
	if !fwtest.Alive(cpid) || !fwtest.Alive(dpid) {
		t.Fatalf("the leftovers should outlive a killed driver (child %v, daemon %v)", fwtest.Alive(cpid), fwtest.Alive(dpid))
	}
	l := fwtest.RunLease(t, dir, "in-progress/a.md")
	time.Sleep(time.Until(time.Unix(0, int64(l.ExpiresAt*1e9))) + 100*time.Millisecond)
	if r := fwtest.Run(t, dir, "recover", "a", "--agent-id", "w2"); r.Code != 0 {
		t.Fatalf("recover after expiry: %v", r)
	}
	if fwtest.Alive(cpid) || fwtest.Alive(dpid) {
		t.Errorf("recover left the last agent's processes running (child %v, daemon %v)", fwtest.Alive(cpid), fwtest.Alive(dpid))
	}
}

// Where cgroup v2 lets the driver make one, the agent's cgroup holds all it
// forked: a daemon the driver never saw (killed before its next pulse)
// goes too when the plan is recovered.
func TestRecoverEmptiesTheAgentsCgroup(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	pids := t.TempDir()
	daemon := filepath.Join(pids, "daemon.pid")
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-daemon", daemon, "-sleep", "5m")
	// Pulses every 2 s: the driver dies before it sees the daemon.
	cmd := fwtest.Cmd(dir, nil, "work-once", "--run", "--agent-id", "w1", "--lease-ttl", "6")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	dpid := fwtest.ReadPID(t, daemon)
	t.Cleanup(func() { syscall.Kill(dpid, syscall.SIGKILL) })
	st := fwtest.StateOf(t, dir, "w1")
	// Its supervisor would stop the run before the recover does.
	killSupervisor(t, dir)
	cmd.Process.Kill()
	cmd.Wait()
	if st.Cgroup == "" {
		data, _ := os.ReadFile(look.LogPath(dir, "w1"))
		t.Skipf("no cgroup for agents here; the driver's log says:\n%s", data)
	}
	if len(st.Adopted) != 0 {
		t.Skipf("the driver recorded the daemon before it died (%v): this test is about one it did not see", st.Adopted)
	}
	time.Sleep(300 * time.Millisecond)
	if !fwtest.Alive(dpid) {
		t.Fatal("the daemon should outlive a killed driver")
	}
	l := fwtest.RunLease(t, dir, "in-progress/a.md")
	time.Sleep(time.Until(time.Unix(0, int64(l.ExpiresAt*1e9))) + 100*time.Millisecond)
	if r := fwtest.Run(t, dir, "recover", "a", "--agent-id", "w2"); r.Code != 0 {
		t.Fatalf("recover after expiry: %v", r)
	}
	if fwtest.Alive(dpid) {
		t.Error("recover left the daemon running")
	}
	if _, err := os.Stat(st.Cgroup); !os.IsNotExist(err) {
		t.Errorf("the agent's cgroup %s is still there: %v", st.Cgroup, err)
	}
}

func TestRunAgentThatMovesItsOwnPlan(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	exe, _ := os.Executable()
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-fw", exe, "-move", "completed")
	r := fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w1")
	if r.Code != 0 || !fwtest.Exists(dir, "completed/a.md") || fwtest.Exists(dir, "review-needed/a.md") {
		t.Fatalf("the agent's own move stands: %v", r)
	}
}

func TestRunMaxPlansWorksThemOneAfterAnother(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"}, fwtest.Plan{Rel: "features/b.md"}, fwtest.Plan{Rel: "features/c.md"})
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t))
	r := fwtest.Run(t, dir, "work-once", "--run", "--max-plans", "2", "--agent-id", "w1")
	if r.Code != 0 || !fwtest.Exists(dir, "review-needed/a.md") || !fwtest.Exists(dir, "review-needed/b.md") || !fwtest.Exists(dir, "features/c.md") {
		t.Fatalf("--max-plans 2: %v", r)
	}
	st := fwtest.StateOf(t, dir, "w1")
	if st.Note != "worked 2 plan(s)" {
		t.Errorf("state note: %q", st.Note)
	}
	// With nothing left for it the worker is idle, exit 1.
	r = fwtest.Run(t, dir, "work-once", "--run", "--max-plans", "5", "--agent-id", "w1")
	if r.Code != 0 || !fwtest.Exists(dir, "review-needed/c.md") {
		t.Fatalf("last plan: %v", r)
	}
	if r := fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w1"); r.Code != fwtest.ExitNothing {
		t.Fatalf("nothing left: %v", r)
	}
}

func TestRunRefusesBeforeClaimingWithoutAWorkingExecutor(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	for _, c := range []struct {
		name, yaml, want string
	}{
		{"no registry", "", "no executor: create"},
		{"no executor key", "endpoints:\n  - name: x\n    tier: mid\n", "no executor: add"},
		{"missing program", "endpoints:\n  - name: x\n    tier: mid\nexecutor: [no-such-agent-3f9]\n", "no-such-agent-3f9: not found on PATH"},
		{"missing path", "endpoints:\n  - name: x\n    tier: mid\nexecutor: [./bin/agent]\n", "./bin/agent: no such file"},
	} {
		os.Remove(filepath.Join(dir, "endpoints.yaml"))
		if c.yaml != "" {
			os.WriteFile(filepath.Join(dir, "endpoints.yaml"), []byte(c.yaml), 0o644)
		}
		r := fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w1")
		if r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, c.want) || strings.Count(r.Stderr, "\n") != 1 {
			t.Errorf("%s: %v", c.name, r)
		}
		if !fwtest.Exists(dir, "features/a.md") {
			t.Fatalf("%s: the plan was claimed anyway", c.name)
		}
	}
}

func TestRunStopsTheAgentWhenItsPlanIsTakenBack(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	agentPID := filepath.Join(t.TempDir(), "agent.pid")
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-pidfile", agentPID, "-sleep", "5m")
	cmd := fwtest.Cmd(dir, nil, "work-once", "--run", "--agent-id", "w1", "--lease-ttl", "0.6", "--stop-grace", "300ms")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	apid := fwtest.ReadPID(t, agentPID)
	if r := fwtest.Run(t, dir, "release", "--force", "in-progress/a.md"); r.Code != 0 {
		t.Fatalf("operator release: %v", r)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != fwtest.ExitError || !strings.Contains(stderr.String(), "lease lost") {
		t.Fatalf("driver whose plan was taken back: %v\n%s", err, stderr.String())
	}
	fwtest.WaitFor(t, "the agent to stop", 5*time.Second, func() bool { return !fwtest.Alive(apid) })
	if !fwtest.Exists(dir, "features/a.md") {
		t.Error("the released plan should stay where the operator put it")
	}
}

func TestRunOneDriverPerAgentID(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"}, fwtest.Plan{Rel: "features/b.md"})
	agentPID := filepath.Join(t.TempDir(), "agent.pid")
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-pidfile", agentPID, "-sleep", "5m")
	cmd := fwtest.Cmd(dir, nil, "work-once", "--run", "--agent-id", "w1", "--stop-grace", "300ms")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Signal(syscall.SIGTERM)
	fwtest.ReadPID(t, agentPID)
	// A cron tick while the first run works: idle, and nothing claimed.
	r := fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w1")
	if r.Code != fwtest.ExitNothing || !strings.Contains(r.Stderr, "agent w1 is already running (pid "+strconv.Itoa(cmd.Process.Pid)) || !fwtest.Exists(dir, "features/b.md") {
		t.Fatalf("second driver for w1: %v", r)
	}
	// Another agent id works beside it.
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t))
	if r := fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w2"); r.Code != 0 || !fwtest.Exists(dir, "review-needed/b.md") {
		t.Fatalf("w2 beside w1: %v", r)
	}
}

func TestDemoAgentWorksAPlanInItsWorktree(t *testing.T) {
	t.Parallel()
	r := fwtest.Run(t, t.TempDir(), "demo", "--keep")
	if r.Code != 0 {
		t.Fatalf("demo --keep: %v", r)
	}
	first, _, _ := strings.Cut(r.Stdout, "\n")
	project := strings.TrimSuffix(strings.TrimPrefix(first, "demo project: "), " (kept)")
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(project)) })
	yaml, err := os.ReadFile(filepath.Join(project, "endpoints.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The same stand-in, faster.
	fast := strings.Replace(string(yaml), `"demo-agent"`, `"demo-agent", "--pace", "5ms"`, 1)
	if fast == string(yaml) {
		t.Fatalf("endpoints.yaml does not name demo-agent:\n%s", yaml)
	}
	os.WriteFile(filepath.Join(project, "endpoints.yaml"), []byte(fast), 0o644)
	r = fwtest.Run(t, project, "work-once", "--run", "--ensure-worktree", "--endpoint", "box-mid", "--agent-id", "mid-7")
	if r.Code != 0 {
		t.Fatalf("work-once --run with the demo agent: %v", r)
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	slug := strings.TrimSuffix(filepath.Base(lines[0]), ".md")
	if last := lines[len(lines)-1]; last != filepath.Join(project, ".plans", "review-needed", slug+".md") {
		t.Errorf("the plan should wait for review: %v", r)
	}
	wt := filepath.Join(project, "var", "worktrees", "mid-7")
	if out, err := exec.Command("git", "-C", wt, "log", "-1", "--format=%an %s", "--name-only").Output(); err != nil ||
		!strings.Contains(string(out), "mid-7 ") || !strings.Contains(string(out), "changes/"+slug+".md") {
		t.Errorf("no commit by the agent in its worktree: %s %v", out, err)
	}
	log, _ := os.ReadFile(filepath.Join(project, "var", "fleet", "logs", "mid-7.log"))
	if !strings.Contains(string(log), " out committed ") || !strings.Contains(string(log), " out done: ready for review") {
		t.Errorf("log:\n%s", log)
	}
	// Run outside a driver, it says what it needs.
	if r := fwtest.Run(t, project, "demo-agent"); r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, "FLEET_PLAN") {
		t.Errorf("demo-agent by hand: %v", r)
	}
}

func TestRunTwoDriversNeverShareAPort(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"}, fwtest.Plan{Rel: "features/b.md"}, fwtest.Plan{Rel: "features/c.md"}, fwtest.Plan{Rel: "features/d.md"})
	rec := t.TempDir()
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-record", filepath.Join(rec, "{agent_id}-{slug}.json"), "-sleep", "300ms")
	var wg sync.WaitGroup
	results := make([]fwtest.Result, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w"+strconv.Itoa(i), "--port-range", "4100-4199")
		}()
	}
	wg.Wait()
	ports := map[string]string{}
	for i, r := range results {
		if r.Code != 0 {
			t.Fatalf("driver %d: %v", i, r)
		}
		files, _ := filepath.Glob(filepath.Join(rec, "w"+strconv.Itoa(i)+"-*.json"))
		if len(files) != 1 {
			t.Fatalf("driver %d ran %d agents", i, len(files))
		}
		var got struct{ Env map[string]string }
		data, _ := os.ReadFile(files[0])
		json.Unmarshal(data, &got)
		p := got.Env["FLEET_PORT"]
		if other, dup := ports[p]; dup || p == "" {
			t.Errorf("w%d got port %q, already given to %s", i, p, other)
		}
		ports[p] = "w" + strconv.Itoa(i)
	}
	// A port is the agent's for good: the next run gets the same one.
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "features/e.md"}, time.Minute)
	if r := fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w2", "--port-range", "4100-4199"); r.Code != 0 {
		t.Fatalf("second run: %v", r)
	}
	var got struct{ Env map[string]string }
	data, _ := os.ReadFile(filepath.Join(rec, "w2-e.json"))
	json.Unmarshal(data, &got)
	if ports[got.Env["FLEET_PORT"]] != "w2" {
		t.Errorf("w2's port moved: now %s, before %v", got.Env["FLEET_PORT"], ports)
	}
}

// killSupervisor kills the supervisor of the driver working in dir, which
// stops the run of a driver that dies (proc.Supervise): a test of what
// the next recover stops kills both.
func killSupervisor(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		args := strings.Split(string(cmdline), "\x00")
		if len(args) > 1 && args[1] == "supervise-run" && slices.Contains(args, dir) {
			syscall.Kill(pid, syscall.SIGKILL)
			return
		}
	}
	t.Fatalf("no supervisor runs for %s", dir)
}
