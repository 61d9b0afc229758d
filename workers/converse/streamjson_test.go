package converse_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/modelapi"
	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/registry"
	"github.com/fleetwatch/fleetwatch/workers/converse"
)

// sjAgent is a program the tests talk to, and the conversation with it.
type sjAgent struct {
	conv   converse.Conversation
	dir    string
	stderr *testkit.LockedBuffer
}

// sjLog is the conversation's Logf, quiet once the test has ended.
func sjLog(t *testing.T) func(string, ...any) {
	var mu sync.Mutex
	over := false
	t.Cleanup(func() { mu.Lock(); over = true; mu.Unlock() })
	return func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if !over {
			t.Logf(format, args...)
		}
	}
}

// sjSpawn starts argv in dir, in a process group of its own that the test
// kills at its end, and holds a stream-json conversation with it. An
// agent that exits must do so within 5s of Close.
func sjSpawn(t *testing.T, dir string, env, argv []string, exits bool, cfg converse.Config) (*sjAgent, error) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	a := &sjAgent{dir: dir, stderr: &testkit.LockedBuffer{}}
	cmd.Stderr = a.stderr
	// Pipes of our own, not exec's: Wait closes those under a reader.
	inR, in, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	out, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); out.Close() })
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		if a.conv != nil {
			a.conv.Close()
		}
		if exits {
			select {
			case <-exited:
			case <-time.After(5 * time.Second):
				t.Errorf("the agent did not exit within 5s of Close")
			}
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	cfg.Logf = sjLog(t)
	a.conv, err = converse.Start(converse.StreamJSON, converse.Pipes{In: in, Out: out}, cfg)
	return a, err
}

// sjClaude runs the real Claude Code with the preset's stream-json
// argv (its asks words too when asks), in a git repository of its own,
// against a scripted API.
func sjClaude(t *testing.T, asks, cfgAsks bool, steps ...modelapi.Step) *sjAgent {
	t.Helper()
	claude := fwtest.RealAgent(t, "claude")
	api := fwtest.ScriptedAPI(t, steps...)
	pr, _ := registry.PresetNamed("claude")
	talk, ok := pr.TalkIn(string(converse.StreamJSON))
	if !ok {
		t.Fatal("the claude preset does not talk stream-json")
	}
	argv := append([]string{claude}, talk.Argv[1:]...)
	if asks {
		argv = append(argv, talk.AsksArgv...)
	}
	for i, w := range argv {
		argv[i] = strings.ReplaceAll(w, "{model}", "claude-sonnet-4-5")
	}
	home := t.TempDir()
	os.Mkdir(filepath.Join(home, ".claude"), 0o700)
	os.WriteFile(filepath.Join(home, ".claude.json"), []byte("{}"), 0o600)
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=sk-ant-test",
		// What the driver's box says of a contained run; as root Claude
		// Code bypasses permissions only in a sandbox.
		"IS_SANDBOX=1"}
	for _, e := range append(append([]string{}, pr.Env...), pr.EnvDefaults...) {
		env = append(env, strings.ReplaceAll(e, "{base_url}", api.URL))
	}
	dir := fwtest.GitRepo(t)
	began := time.Now()
	a, err := sjSpawn(t, dir, env, argv, true, converse.Config{Dir: dir, Asks: cfgAsks})
	if err != nil {
		t.Fatalf("Start: %v\nstderr: %s", err, a.stderr)
	}
	t.Logf("Start (the CLI up, initialize answered): %s", time.Since(began).Round(time.Millisecond))
	return a
}

// until reads events until one of kind, within limit; it returns that
// one and all read.
func (a *sjAgent) until(t *testing.T, kind converse.EventKind, limit time.Duration) (converse.Event, []converse.Event) {
	t.Helper()
	var seen []converse.Event
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		select {
		case e, ok := <-a.conv.Events():
			if !ok {
				t.Fatalf("the events ended waiting for %s; seen %+v\nstderr: %s", kind, seen, a.stderr)
			}
			seen = append(seen, e)
			if e.Kind == kind {
				return e, seen
			}
		case <-timer.C:
			t.Fatalf("no %s within %s; seen %+v\nstderr: %s", kind, limit, seen, a.stderr)
		}
	}
}

func sjHas(sjEvents []converse.Event, kind converse.EventKind, text string) bool {
	for _, e := range sjEvents {
		if e.Kind == kind && strings.Contains(e.Text, text) {
			return true
		}
	}
	return false
}

// A first turn: the plan goes as a user message, the agent runs the
// script's command with its Bash tool, and the turn ends with its usage.
func TestStreamJSONTurn(t *testing.T) {
	a := sjClaude(t, false, false,
		modelapi.Step{Shell: "echo hello > hello.txt && echo wrote", Input: 120, Output: 30},
		modelapi.Step{Text: "## Result\nwrote hello.txt", Input: 80, Output: 10})
	if steered, err := a.conv.Steer("nothing runs"); steered || err != nil {
		t.Errorf("Steer while idle: %v %v", steered, err)
	}
	if err := a.conv.Interrupt(); !errors.Is(err, converse.ErrIdle) {
		t.Errorf("Interrupt while idle: %v", err)
	}
	sent := time.Now()
	if err := a.conv.Prompt("write hello.txt"); err != nil {
		t.Fatal(err)
	}
	if err := a.conv.Prompt("again"); !errors.Is(err, converse.ErrBusy) {
		t.Errorf("a second Prompt during the turn: %v", err)
	}
	if e, _ := a.until(t, converse.TurnStarted, time.Second); e.Turn != "1" {
		t.Errorf("turn %q", e.Turn)
	}
	tool, _ := a.until(t, converse.Tool, 30*time.Second)
	t.Logf("send → first event of the agent: %s", time.Since(sent).Round(time.Millisecond))
	end, seen := a.until(t, converse.TurnEnded, 30*time.Second)
	t.Logf("send → the turn's end: %s", time.Since(sent).Round(time.Millisecond))
	if tool.Text != "Bash: echo hello > hello.txt && echo wrote" {
		t.Errorf("the tool event: %+v", tool)
	}
	if !sjHas(seen, converse.Message, "## Result\nwrote hello.txt\n") || !sjHas(seen, converse.Usage, "") {
		t.Errorf("no message event: %+v", seen)
	}
	if tk := end.Tokens; end.Stop != converse.StopDone || tk == nil || tk.Input != 200 || tk.Output != 40 || tk.USD <= 0 {
		t.Errorf("the turn's end: %+v tokens %+v", end, end.Tokens)
	}
	if b, err := os.ReadFile(filepath.Join(a.dir, "hello.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("hello.txt: %q %v", b, err)
	}
	if s := a.conv.Session(); len(s) < 8 {
		t.Errorf("session %q", s)
	}
}

// A note sent while the turn runs a command reaches the model at its next
// call, in the same turn: it runs the command the note gives.
func TestStreamJSONSteer(t *testing.T) {
	a := sjClaude(t, false, false,
		modelapi.Step{Shell: "echo waiting && sleep 3 && echo slept"},
		modelapi.Step{ShellFrom: "RUN: ", Text: "no note came"},
		modelapi.Step{Text: "## Result\ndone"})
	if err := a.conv.Prompt("wait a little"); err != nil {
		t.Fatal(err)
	}
	a.until(t, converse.Tool, 30*time.Second)
	steered, err := a.conv.Steer("A note from the operator.\nRUN: touch noted.txt")
	if !steered || err != nil {
		t.Fatalf("Steer during the turn: %v %v", steered, err)
	}
	end, seen := a.until(t, converse.TurnEnded, 30*time.Second)
	if !sjHas(seen, converse.Tool, "Bash: touch noted.txt") || end.Stop != converse.StopDone || end.Turn != "1" {
		t.Errorf("the note's command is not in the turn: %+v", seen)
	}
	if _, err := os.Stat(filepath.Join(a.dir, "noted.txt")); err != nil {
		t.Errorf("the note's command did not run: %v", err)
	}
}

// An interrupt ends the turn while its command sleeps; the conversation
// goes on.
func TestStreamJSONInterrupt(t *testing.T) {
	// Claude Code refuses a command that only sleeps: this one echoes first.
	a := sjClaude(t, false, false,
		modelapi.Step{Shell: "echo waiting && sleep 30 && echo woke > woke.txt"},
		modelapi.Step{Text: "## Result\nafter the interrupt"})
	if err := a.conv.Prompt("sleep"); err != nil {
		t.Fatal(err)
	}
	a.until(t, converse.Tool, 30*time.Second)
	time.Sleep(500 * time.Millisecond)
	asked := time.Now()
	if err := a.conv.Interrupt(); err != nil {
		t.Fatal(err)
	}
	end, _ := a.until(t, converse.TurnEnded, 5*time.Second)
	t.Logf("interrupt → the turn's end: %s", time.Since(asked).Round(time.Millisecond))
	if end.Stop != converse.StopCancelled {
		t.Errorf("the interrupted turn ended %+v", end)
	}
	if err := a.conv.Prompt("go on"); err != nil {
		t.Fatal(err)
	}
	end, _ = a.until(t, converse.TurnEnded, 30*time.Second)
	if end.Stop != converse.StopDone || end.Text != "## Result after the interrupt" || end.Turn != "2" {
		t.Errorf("the next turn ended %+v", end)
	}
	if _, err := os.Stat(filepath.Join(a.dir, "woke.txt")); err == nil {
		t.Errorf("the interrupted command ran to its end")
	}
}

// With asks, each tool call waits for an answer: allowed it runs, denied
// it does not. Without, the conversation allows what the agent asks.
func TestStreamJSONAsks(t *testing.T) {
	steps := []modelapi.Step{{Shell: "touch allowed.txt"}, {Shell: "touch denied.txt"}, {Text: "## Result\ndone"}}
	t.Run("asks", func(t *testing.T) {
		a := sjClaude(t, true, true, steps...)
		if err := a.conv.Prompt("touch two files"); err != nil {
			t.Fatal(err)
		}
		first, _ := a.until(t, converse.Asked, 30*time.Second)
		if q := first.Ask; q == nil || q.Question != "Bash: touch allowed.txt" || len(q.Options) != 2 || !q.Options[0].Allow || q.Options[1].Allow {
			t.Fatalf("the first ask: %+v", first.Ask)
		}
		if err := a.conv.Answer("no-such-id", converse.Reply{Option: "allow"}); !errors.Is(err, converse.ErrNoAsk) {
			t.Errorf("an answer to no ask: %v", err)
		}
		if err := a.conv.Answer(first.Ask.ID, converse.Reply{Option: "maybe"}); err == nil {
			t.Errorf("an option the ask lacks was taken")
		}
		if err := a.conv.Answer(first.Ask.ID, converse.Reply{Option: "allow"}); err != nil {
			t.Fatal(err)
		}
		second, _ := a.until(t, converse.Asked, 30*time.Second)
		if second.Ask.Question != "Bash: touch denied.txt" {
			t.Fatalf("the second ask: %+v", second.Ask)
		}
		if err := a.conv.Answer(second.Ask.ID, converse.Reply{Option: "deny", Text: "not that one"}); err != nil {
			t.Fatal(err)
		}
		if end, _ := a.until(t, converse.TurnEnded, 30*time.Second); end.Stop != converse.StopDone {
			t.Errorf("the turn ended %+v", end)
		}
		if _, err := os.Stat(filepath.Join(a.dir, "allowed.txt")); err != nil {
			t.Errorf("the allowed command did not run: %v", err)
		}
		if _, err := os.Stat(filepath.Join(a.dir, "denied.txt")); err == nil {
			t.Errorf("the denied command ran")
		}
	})
	t.Run("allowed_by_the_conversation", func(t *testing.T) {
		a := sjClaude(t, true, false, steps...)
		if err := a.conv.Prompt("touch two files"); err != nil {
			t.Fatal(err)
		}
		_, seen := a.until(t, converse.TurnEnded, 30*time.Second)
		if sjHas(seen, converse.Asked, "") {
			t.Errorf("an ask reached the driver: %+v", seen)
		}
		for _, f := range []string{"allowed.txt", "denied.txt"} {
			if _, err := os.Stat(filepath.Join(a.dir, f)); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	})
}
