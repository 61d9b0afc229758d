package proc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	_ "github.com/fleetwatch/fleetwatch/planfs/claims/etcdclaims" // the registry names the backends a spec may ask for
	_ "github.com/fleetwatch/fleetwatch/planfs/claims/gitclaims"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// configure tells the fake driver of agent in project how to behave.
func configure(t *testing.T, project, agent, conf string) {
	t.Helper()
	dir := filepath.Join(project, ".fake")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, tree.SafeID(agent)+".conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
}

// start spawns the fake driver for agent and kills its group when the test ends.
func start(t *testing.T, s SpawnSpec) *Child {
	t.Helper()
	if s.Bin == "" {
		s.Bin = testkit.FakeDriver(t)
	}
	c, err := Start(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testkit.KillGroup(c.State.PID) })
	return c
}

// eventually waits up to 10 s for ok.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func readFile(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}

func TestSpawnStartsWorkOnceDetachedAsCronWould(t *testing.T) {
	t.Parallel()
	project := testkit.Project(t)
	configure(t, project, "ui-mid-1", "sleep=1s\nexit=3\nlines=2\n")
	s := SpawnSpec{Project: project, Agent: "ui-mid-1", Tier: "mid", Model: "qwen3 32b", Run: true, MaxPlans: 3}
	c := start(t, s)
	pid := c.State.PID
	if c.State.AgentID != "ui-mid-1" || c.State.State != look.StateRunning || c.State.Host == "" || c.State.Tier != "mid" {
		t.Errorf("child state %+v", c.State)
	}

	// While it runs: its own session, stdin and stdout /dev/null (the
	// driver logs in its own words), cwd the project, stderr the log.
	if sid, err := unix.Getsid(pid); err != nil || sid != pid {
		t.Errorf("session of %d is %d (%v), want its own", pid, sid, err)
	}
	proc := "/proc/" + strconv.Itoa(pid)
	log := look.LogPath(project, "ui-mid-1")
	for fd, want := range map[string]string{"0": os.DevNull, "1": os.DevNull, "2": log} {
		if out, _ := os.Readlink(proc + "/fd/" + fd); out != want {
			t.Errorf("fd %s is %q, want %s", fd, out, want)
		}
	}
	if cwd, _ := os.Readlink(proc + "/cwd"); cwd != project {
		t.Errorf("cwd %q", cwd)
	}

	// It gets exactly what cron's line gives it, plus --max-plans.
	argvFile := filepath.Join(project, ".fake", "ui-mid-1.argv")
	eventually(t, "the fake recorded its argv", func() bool { return readFile(argvFile) != "" })
	var argv []string
	if err := json.Unmarshal([]byte(readFile(argvFile)), &argv); err != nil {
		t.Fatal(err)
	}
	want := append(WorkArgs(project, Spec{Agent: "ui-mid-1", Tier: "mid", Model: "qwen3 32b", Run: true}), "--max-plans", "3")
	if !slices.Equal(argv, want) {
		t.Errorf("argv %q, want %q", argv, want)
	}

	// It is reaped when it exits: no zombie stays behind.
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not exit")
	}
	if code, ok := c.Exited(); !ok || code != 3 {
		t.Errorf("exit %d (%v), want 3", code, ok)
	}
	if _, err := os.Stat(proc); err == nil {
		t.Errorf("%s still exists after the worker exited: a zombie", proc)
	}
	text := readFile(log)
	if !strings.Contains(text, " fleet starting fleetwatch work-once --root ") || !strings.Contains(text, "'qwen3 32b' --run --max-plans 3") ||
		strings.Count(text, " out fake line ") != 2 { // written to stderr, which is the log
		t.Errorf("log:\n%s", text)
	}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if _, _, _, ok := look.ParseLogLine(line); !ok {
			t.Errorf("log line not in the log format: %q", line)
		}
	}
}

func TestSpawnReturnsPidAndAppendsToTheLog(t *testing.T) {
	t.Parallel()
	project := testkit.Project(t)
	log := look.LogPath(project, "mid-2")
	os.MkdirAll(filepath.Dir(log), 0o755)
	os.WriteFile(log, []byte("earlier run\n"), 0o644)
	pid, err := spawn(SpawnSpec{Bin: testkit.FakeDriver(t), Project: project, Agent: "mid-2", Endpoint: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testkit.KillGroup(pid) })
	argvFile := filepath.Join(project, ".fake", "mid-2.argv")
	eventually(t, "the fake ran", func() bool { return readFile(argvFile) != "" })
	if got := readFile(argvFile); strings.Contains(got, "--max-plans") || strings.Contains(got, "--run") || !strings.Contains(got, `"--endpoint","laptop"`) {
		t.Errorf("argv %s", got)
	}
	if text := readFile(log); !strings.HasPrefix(text, "earlier run\n") {
		t.Errorf("the log was not appended to:\n%s", text)
	}
}

func TestSpawnRefusesAgentWithRunningWorker(t *testing.T) {
	t.Parallel()
	project := testkit.Project(t)
	bin := testkit.FakeDriver(t)
	now := time.Now()
	running := func(agent string, beat time.Time) look.State {
		return look.State{PID: os.Getpid(), AgentID: agent, State: look.StateRunning, Host: look.Hostname(),
			Started: look.Stamp{Time: beat}, LastHeartbeat: look.Stamp{Time: beat}, HeartbeatEvery: 30}
	}
	write := func(st look.State) {
		if err := look.WriteState(project, st); err != nil {
			t.Fatal(err)
		}
	}
	write(running("live-1", now))
	write(running("stale-1", now.Add(-time.Hour)))
	write(running("a@b", now))
	dead := running("dead-1", now)
	dead.PID = testkit.DeadPID(t)
	write(dead)
	code := 0
	done := running("done-1", now)
	done.State, done.ExitCode = look.StateExited, &code
	write(done)

	for agent, want := range map[string]string{
		"live-1":  "live-1 already has a live worker (pid ",
		"stale-1": "stale-1 already has a stale worker",
		"a-b":     `agent id "a-b" shares its state and log files with "a@b", which is running`,
	} {
		if _, err := spawn(SpawnSpec{Bin: bin, Project: project, Agent: agent, Tier: "mid"}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", agent, err, want)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error of more than one line: %q", agent, err)
		}
	}
	// A dead or exited worker's id is free again.
	for _, agent := range []string{"dead-1", "done-1"} {
		configure(t, project, agent, "")
		c := start(t, SpawnSpec{Bin: bin, Project: project, Agent: agent, Tier: "small"})
		<-c.Done()
	}
	if _, err := os.Stat(look.LogPath(project, "live-1")); err == nil {
		t.Error("a refused spawn still created a log")
	}
}

func TestSpawnSpecCheck(t *testing.T) {
	ok := SpawnSpec{Bin: "/usr/bin/fleetwatch", Project: "/srv/app", Agent: "ui-mid-1", Tier: "mid"}
	if err := ok.Check(); err != nil {
		t.Fatalf("good spec: %v", err)
	}
	for _, c := range []struct {
		edit func(*SpawnSpec)
		want string
	}{
		{func(s *SpawnSpec) { s.Bin = "fleetwatch" }, "not an absolute path"},
		{func(s *SpawnSpec) { s.Project = "app" }, "not an absolute path"},
		{func(s *SpawnSpec) { s.Agent = "" }, "agent id is empty"},
		{func(s *SpawnSpec) { s.Agent = "--run" }, "starts with -"},
		{func(s *SpawnSpec) { s.Agent = "ui mid" }, "has a blank"},
		{func(s *SpawnSpec) { s.Agent = "ui\x1b[2Jmid" }, "control character"},
		{func(s *SpawnSpec) { s.Agent = strings.Repeat("a", 81) }, "at most 80"},
		{func(s *SpawnSpec) { s.Tier = "huge" }, `unknown tier "huge"`},
		{func(s *SpawnSpec) { s.Model = "q\nwen" }, "model:"},
		{func(s *SpawnSpec) { s.Registry = "/srv/endpoints.yaml" }, "a registry needs an endpoint"},
		{func(s *SpawnSpec) { s.MaxPlans = 101 }, "max plans must be from 1 to 100"},
		{func(s *SpawnSpec) { s.Claims = "redis" }, `claims: "redis" is not local, git or etcd`},
	} {
		s := ok
		c.edit(&s)
		if err := s.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", s, err, c.want)
		}
	}
}

func TestUniqueAgentIDSkipsEveryKnownAgent(t *testing.T) {
	t.Parallel()
	project := testkit.Project(t)
	if got := UniqueAgentID(project, "ui-mid"); got != "ui-mid-1" {
		t.Errorf("empty project: %s", got)
	}
	if err := look.WriteState(project, look.State{AgentID: "ui-mid-1", State: look.StateExited}); err != nil {
		t.Fatal(err)
	}
	reg := "endpoints:\n  - name: ui-mid-2\n    tier: mid\n    base_url: http://127.0.0.1:1/v1\n    model: m\n"
	if err := os.WriteFile(filepath.Join(project, "endpoints.yaml"), []byte(reg), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := planfs.Scaffold(project); err != nil {
		t.Fatal(err)
	}
	tr, err := planfs.Open(project)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.AddPlanAt(model.Features, "x.md", "# X\n", time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Claim("features/x.md", "ui-mid-3", 600); err != nil {
		t.Fatal(err)
	}
	// ui@mid-5 would share ui-mid-5's files.
	if got := UniqueAgentID(project, "ui-mid-", "ui-mid-4", "ui@mid-5"); got != "ui-mid-6" {
		t.Errorf("got %s, want ui-mid-6 (1 state, 2 endpoint, 3 lease, 4 and 5 taken)", got)
	}
}
