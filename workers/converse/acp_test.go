package converse_test

import (
	"bytes"
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
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/registry"
	"github.com/fleetwatch/fleetwatch/workers/converse"
)

// agent is a started agent process and its conversation.
type agent struct {
	conv   converse.Conversation
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	events []converse.Event // every event read so far
}

// safeLogf is t.Logf until the test ends: the conversation may notice
// something after.
func safeLogf(t *testing.T) func(string, ...any) {
	var mu sync.Mutex
	done := false
	t.Cleanup(func() { mu.Lock(); done = true; mu.Unlock() })
	return func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			t.Logf(format, args...)
		}
	}
}

// startAgent starts argv in dir with env and an ACP conversation with it;
// the test's end closes the conversation and checks Close returns and
// the process goes.
func startAgent(t *testing.T, dir string, env, argv []string, cfg converse.Config) (*agent, error) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	a := &agent{cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stderr = a.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	// Not StdoutPipe: its Wait would close the pipe under the reader.
	out, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { out.Close() })
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { stopAgent(t, a, exited) })
	cfg.Dir, cfg.Logf = dir, safeLogf(t)
	a.conv, err = converse.Start(converse.ACP, converse.Pipes{In: in, Out: out}, cfg)
	return a, err
}

// stopAgent closes the conversation (which must return at once), gives
// the agent a few seconds to exit on its closed stdin, then kills it.
func stopAgent(t *testing.T, a *agent, exited chan struct{}) {
	if a.conv != nil {
		start := time.Now()
		if err := a.conv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("Close took %s", d)
		}
	}
	select {
	case <-exited:
	case <-time.After(2 * time.Second):
		_ = syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
	if t.Failed() {
		t.Logf("the agent's stderr:\n%s", clipped(a.stderr.String()))
	}
}

func clipped(s string) string { return s[:min(len(s), 4<<10)] }

// until reads events until one of kind arrives, failing after within.
func (a *agent) until(t *testing.T, kind converse.EventKind, within time.Duration) []converse.Event {
	t.Helper()
	var got []converse.Event
	deadline := time.After(within)
	for {
		select {
		case e, ok := <-a.conv.Events():
			if !ok {
				t.Fatalf("Events closed before a %s; read: %+v", kind, got)
			}
			got = append(got, e)
			a.events = append(a.events, e)
			if e.Kind == kind {
				return got
			}
		case <-deadline:
			t.Fatalf("no %s within %s; read: %+v", kind, within, got)
		}
	}
}

// opencode starts the real `opencode acp` as its preset's talk runs it,
// against api, in a new git repository, with a temporary HOME.
func opencode(t *testing.T, api *modelapi.Server, asks bool) (*agent, string) {
	t.Helper()
	bin := fwtest.RealAgent(t, "opencode")
	p, _ := registry.PresetNamed("opencode")
	talk, ok := p.TalkIn("acp")
	if !ok {
		t.Fatal("the opencode preset holds no acp talk")
	}
	home, dir := t.TempDir(), fwtest.GitRepo(t)
	for _, w := range p.Writes {
		if err := os.MkdirAll(filepath.Join(home, strings.TrimPrefix(w, "~/")), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	fill := strings.NewReplacer("{base_url}", api.URL+"/v1", "{model}", p.Model)
	env := []string{"HOME=" + home, "ANTHROPIC_API_KEY=sk-ant-test"}
	// As the driver does: the talk's env after the preset's, a later NAME= winning.
	more := append(append([]string{}, p.Env...), talk.Env...)
	if asks {
		more = append(more, talk.AsksEnv...)
	}
	for _, e := range more {
		env = append(env, fill.Replace(e))
	}
	argv := append([]string{bin}, talk.Argv[1:]...)
	if asks {
		argv = append(argv, talk.AsksArgv...)
	}
	a, err := startAgent(t, dir, env, argv, converse.Config{Model: p.Model, Asks: asks})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return a, dir
}

func exists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

// The real opencode over ACP: a turn runs a command and ends; a second
// turn's note makes it run the note's command; an interrupt ends a
// sleeping turn cancelled within seconds, and the conversation goes on.
func TestACPOpencodeConversation(t *testing.T) {
	t.Parallel()
	api := fwtest.ScriptedAPI(t,
		modelapi.Step{Shell: "touch first.txt"}, modelapi.Step{Text: "made first.txt"},
		modelapi.Step{ShellFrom: "RUN: ", Text: "no note"}, modelapi.Step{Text: "ran the note"},
		modelapi.Step{Shell: "sleep 30"},
		// After the cancel the conversation may hold one answer more or
		// not: either way the note's command runs, then a text ends it.
		modelapi.Step{ShellFrom: "RUN: ", Text: "no note"}, modelapi.Step{ShellFrom: "RUN: ", Text: "no note"},
		modelapi.Step{Text: "done"}, modelapi.Step{Text: "done"})
	a, dir := opencode(t, api, false)
	if a.conv.Session() == "" {
		t.Error("no session id after Start")
	}
	if _, err := a.conv.Steer("a note"); err != nil {
		t.Errorf("Steer: %v (ACP has no steer: false, nil)", err)
	}
	if err := a.conv.Interrupt(); !errors.Is(err, converse.ErrIdle) {
		t.Errorf("Interrupt with no turn: %v, want ErrIdle", err)
	}

	called, sent := callAfter(api), time.Now()
	if err := a.conv.Prompt("Make first.txt."); err != nil {
		t.Fatal(err)
	}
	if err := a.conv.Prompt("again"); !errors.Is(err, converse.ErrBusy) {
		t.Errorf("a Prompt during a turn: %v, want ErrBusy", err)
	}
	turn := a.until(t, converse.TurnEnded, 60*time.Second)
	reportFirstEvent(t, sent, turn, called)
	wantEnd(t, turn, converse.StopDone)
	if !exists(dir, "first.txt") || !hasTool(turn, "touch first.txt") {
		t.Errorf("the first turn ran no touch first.txt (file there: %v): %+v", exists(dir, "first.txt"), turn)
	}
	if !hasKind(turn, converse.Message, "made first.txt") || turn[len(turn)-1].Tokens == nil {
		t.Fatalf("the first turn's message or usage is missing: %+v", turn)
	}
	// opencode's prompt answer carries its last model call's figures.
	if tok := *turn[len(turn)-1].Tokens; tok.Input != 100 || tok.Output != 20 {
		t.Errorf("the turn's tokens: %+v, want the last call's 100 in, 20 out", tok)
	}
	for _, e := range turn {
		if e.Kind == converse.Usage {
			t.Logf("a usage update: %+v", *e.Tokens)
		}
	}
	for _, c := range api.Calls() {
		if c.Tool != "" && c.Model != "claude-sonnet-4-5" {
			t.Errorf("a turn's call went to model %q, not the preset's", c.Model)
		}
	}

	called, sent = callAfter(api), time.Now()
	if err := a.conv.Prompt("A note from the operator:\nRUN: touch noted.txt"); err != nil {
		t.Fatal(err)
	}
	turn = a.until(t, converse.TurnEnded, 60*time.Second)
	reportFirstEvent(t, sent, turn, called)
	wantEnd(t, turn, converse.StopDone)
	if !exists(dir, "noted.txt") {
		t.Error("the note's command did not run")
	}

	interrupted(t, a, dir)
}

// interrupted runs a sleeping turn, interrupts it, and goes on.
func interrupted(t *testing.T, a *agent, dir string) {
	if err := a.conv.Prompt("Wait a while."); err != nil {
		t.Fatal(err)
	}
	began := a.until(t, converse.Tool, 60*time.Second) // the sleep started
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	if err := a.conv.Interrupt(); err != nil {
		t.Fatalf("Interrupt: %v", err)
	}
	wantEnd(t, append(began, a.until(t, converse.TurnEnded, 20*time.Second)...), converse.StopCancelled)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the interrupted turn took %s to end", d)
	}
	t.Logf("an interrupt ended the turn in %s", time.Since(start).Round(time.Millisecond))
	if err := a.conv.Prompt("RUN: touch after.txt"); err != nil {
		t.Fatal(err)
	}
	wantEnd(t, a.until(t, converse.TurnEnded, 60*time.Second), converse.StopDone)
	if !exists(dir, "after.txt") {
		t.Error("the turn after the interrupt did not run its command")
	}
}

// callAfter watches api for a call offering the shell tool beyond the
// n it had, and says when it came: the prompt reached the agent, which
// asked the model.
func callAfter(api *modelapi.Server) <-chan time.Time {
	n, at := len(api.Calls()), make(chan time.Time, 1)
	go func() {
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			for _, c := range api.Calls()[n:] {
				if c.Tool != "" {
					at <- time.Now()
					return
				}
			}
		}
	}()
	return at
}

// reportFirstEvent logs how long a Prompt took to reach the model API
// and to bring the agent's first event of its own (TurnStarted is the
// conversation's).
func reportFirstEvent(t *testing.T, sent time.Time, evs []converse.Event, called <-chan time.Time) {
	select {
	case at := <-called:
		t.Logf("Prompt → the agent's model call: %s", at.Sub(sent).Round(time.Millisecond))
	default:
	}
	for _, e := range evs {
		if e.Kind != converse.TurnStarted {
			t.Logf("Prompt → first agent event (%s): %s", e.Kind, e.At.Sub(sent).Round(time.Millisecond))
			return
		}
	}
}

func wantEnd(t *testing.T, evs []converse.Event, stop string) {
	t.Helper()
	end := evs[len(evs)-1]
	if end.Kind != converse.TurnEnded || end.Stop != stop {
		t.Fatalf("the turn ended %q (%s), want %q; events: %+v", end.Stop, end.Text, stop, evs)
	}
	if evs[0].Kind != converse.TurnStarted || evs[0].Turn == "" || evs[0].Turn != end.Turn {
		t.Errorf("the turn's events do not start with its TurnStarted: %+v", evs)
	}
}

func hasTool(evs []converse.Event, text string) bool { return hasKind(evs, converse.Tool, text) }

func hasKind(evs []converse.Event, kind converse.EventKind, text string) bool {
	for _, e := range evs {
		if e.Kind == kind && strings.Contains(e.Text, text) {
			return true
		}
	}
	return false
}

// With asks, opencode's permission requests reach the driver as Asked
// events: allowed, the command runs; denied, it does not.
func TestACPOpencodeAsks(t *testing.T) {
	t.Parallel()
	api := fwtest.ScriptedAPI(t,
		modelapi.Step{Shell: "touch allowed.txt"}, modelapi.Step{Text: "made allowed.txt"},
		modelapi.Step{Shell: "touch denied.txt"}, modelapi.Step{Text: "was refused"}, modelapi.Step{Text: "was refused"})
	a, dir := opencode(t, api, true)
	if err := a.conv.Answer("acp-99", converse.Reply{Option: "once"}); !errors.Is(err, converse.ErrNoAsk) {
		t.Errorf("an answer to no request: %v, want ErrNoAsk", err)
	}
	for _, allow := range []bool{true, false} {
		if err := a.conv.Prompt("Make the file."); err != nil {
			t.Fatal(err)
		}
		ask := a.until(t, converse.Asked, 60*time.Second)
		e := ask[len(ask)-1]
		t.Logf("asked: %+v", *e.Ask)
		if !strings.Contains(e.Ask.Question, "touch") || len(e.Ask.Options) == 0 || strings.Contains(e.Ask.Question, "\n") {
			t.Errorf("the request: %+v", *e.Ask)
		}
		reply := converse.Reply{Deny: true}
		if allow {
			reply = converse.Reply{Option: allowOption(t, e.Ask.Options)}
		}
		if err := a.conv.Answer(e.Ask.ID, reply); err != nil {
			t.Fatalf("Answer: %v", err)
		}
		if err := a.conv.Answer(e.Ask.ID, reply); !errors.Is(err, converse.ErrNoAsk) {
			t.Errorf("a second answer: %v, want ErrNoAsk", err)
		}
		a.until(t, converse.TurnEnded, 60*time.Second)
	}
	if !exists(dir, "allowed.txt") || exists(dir, "denied.txt") {
		t.Errorf("allowed.txt there: %v (want true); denied.txt there: %v (want false)", exists(dir, "allowed.txt"), exists(dir, "denied.txt"))
	}
}

func allowOption(t *testing.T, opts []converse.Option) string {
	for _, o := range opts {
		if o.Allow {
			return o.ID
		}
	}
	t.Fatalf("no allow option in %+v", opts)
	return ""
}
