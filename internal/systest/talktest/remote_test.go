package talktest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/modelapi"
	"github.com/fleetwatch/fleetwatch/internal/systest/remotetest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/agentkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// Across two clones of a remote (claims through git): the agent on host-b
// asks a question; its record carries it to host-c, whose answer travels
// back in the record and reaches the agent, which prints it. A note from
// host-c to the one-shot run is kept for its plan's next run, on host-b.
func TestAnswerFromAnotherMachineReachesTheAgent(t *testing.T) {
	t.Parallel()
	f := remotetest.NewFleet(t, remotetest.Plans(1)...)
	b, c := f.Clone(t, f.Bare), f.Clone(t, f.Bare)
	remotetest.NeedBackend(t, b)
	heard := filepath.Join(t.TempDir(), "heard")
	os.MkdirAll(heard, 0o755)
	script := `a=$("$0" ask "which port?") || exit 3; printf '%s' "$a" > "$1/answer"`
	fwtest.WithExecutor(t, b, "sh", "-c", script, fwtest.Exe(t), heard)
	fwtest.Grant(t, b, heard)
	wb, outB := remotetest.Worker(t, b, "host-b", "wb")
	fromC := []string{"FLEET_HOST=host-c"}
	var r fwtest.Result
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		r = fwtest.RunEnv(t, c, fromC, "answer", "wb", "--root", c, "8080")
		if r.Code == 0 || time.Now().After(end) {
			break
		}
	}
	if r.Code != 0 || !strings.Contains(r.Stdout, "wb on host-b: sent") {
		t.Fatalf("the answer from host-c: %v\nhost-b:\n%s", r, outB)
	}
	done := make(chan error, 1)
	go func() { done <- wb.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("wb did not finish after its answer:\n%s", outB)
	}
	if got, _ := os.ReadFile(filepath.Join(heard, "answer")); string(got) != "8080" {
		t.Errorf("the agent on host-b heard %q\n%s", got, outB)
	}
	if log := logOf(b, "wb"); !strings.Contains(log, "answer from operator-tester: answered") {
		t.Errorf("wb's driver does not say it took the answer:\n%s", log)
	}
	if r := fwtest.RunEnv(t, c, fromC, "tell", "wb", "--root", c, "--host", "host-b", "hello"); r.Code != 1 || !strings.Contains(r.Stderr, "exited") {
		t.Errorf("a note to the exited worker on host-b: %v", r)
	}
}

// Across two clones of a remote: a note sent on host-c reaches the real
// opencode talking ACP on host-b and changes what it does next.
func TestNoteFromAnotherMachineReachesTheAgent(t *testing.T) {
	t.Parallel()
	fwtest.NeedLandlock(t, 4)
	c := clis[0] // opencode over ACP
	bin := fwtest.RealAgent(t, c.preset)
	api := fwtest.ScriptedAPI(t, modelapi.Step{Shell: "echo working && sleep 6"}, modelapi.Step{Text: "the first turn is done"},
		modelapi.Step{ShellFrom: "RUN: ", Text: "no note came"}, modelapi.Step{Text: "## Result\ndone"})
	f := remotetest.NewFleet(t, fwtest.Plan{Rel: "features/talk.md"})
	b, other := f.Clone(t, f.Bare), f.Clone(t, f.Bare)
	remotetest.NeedBackend(t, b)
	agentkit.WriteFile(t, b, "endpoints.yaml", "endpoints:\n  - name: e\n    tier: mid\n    model: "+c.model+"\n    agent: "+c.preset+
		"\n    talk: "+c.talk+"\n    base_url: "+api.URL+c.api+"\n")
	env := append(agentkit.HomeFor(t, c.preset, bin, c.key), "FLEET_HOST=host-b")
	// A long lease: a renewal through git on a loaded machine is no
	// race here; the note comes by the backend's own word (its watch).
	wb := fwtest.Cmd(b, env, "work-once", "--root", b, "--run", "--once", "--ensure-worktree", "--endpoint", "e", "--agent-id", "wb", "--lease-ttl", "30")
	var outB strings.Builder
	wb.Stdout, wb.Stderr = &outB, &outB
	if err := wb.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if wb.ProcessState == nil {
			wb.Process.Kill()
			wb.Wait()
		}
	})
	for end := time.Now().Add(90 * time.Second); !strings.Contains(logOf(b, "wb"), "agent: "); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("wb's agent did not start working:\n%s\n%s", logOf(b, "wb"), &outB)
		}
	}
	start := time.Now()
	r := fwtest.RunEnv(t, other, []string{"FLEET_HOST=host-c"}, "tell", "wb", "--root", other, "RUN: "+commitCmd("noted.txt"))
	if r.Code != 0 || !strings.Contains(r.Stdout, "wb on host-b: sent") {
		t.Fatalf("the note from host-c: %v", r)
	}
	for end := time.Now().Add(30 * time.Second); !strings.Contains(logOf(b, "wb"), "tell from operator-tester: queued"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("wb's driver did not take the note:\n%s", logOf(b, "wb"))
		}
	}
	t.Logf("the note from host-c reached wb's driver on host-b in %v", time.Since(start))
	done := make(chan error, 1)
	go func() { done <- wb.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("wb: %v\n%s\nlog:\n%s", err, &outB, logOf(b, "wb"))
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("wb did not finish:\n%s", logOf(b, "wb"))
	}
	if got := committed(t, b, "noted.txt"); got != "noted.txt" {
		t.Errorf("the note's command did not run on host-b: %q\nlog:\n%s", got, logOf(b, "wb"))
	}
}
