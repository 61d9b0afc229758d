package converse

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/modelapi"
	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/registry"
)

// asEvents records a conversation's events for a test to wait on, in
// order: each wait looks from after the event the last one returned.
type asEvents struct {
	mu     sync.Mutex
	all    []Event
	next   int
	more   chan struct{}
	closed chan struct{}
}

func asRecord(c Conversation) *asEvents {
	r := &asEvents{more: make(chan struct{}, 1), closed: make(chan struct{})}
	go func() {
		defer close(r.closed)
		for ev := range c.Events() {
			r.mu.Lock()
			r.all = append(r.all, ev)
			r.mu.Unlock()
			select {
			case r.more <- struct{}{}:
			default:
			}
		}
	}()
	return r
}

// wait is the next event ok takes, failing the test after limit.
func (r *asEvents) wait(t *testing.T, what string, limit time.Duration, ok func(Event) bool) Event {
	t.Helper()
	deadline := time.After(limit)
	for {
		r.mu.Lock()
		for ; r.next < len(r.all); r.next++ {
			if ev := r.all[r.next]; ok(ev) {
				r.next++
				r.mu.Unlock()
				return ev
			}
		}
		r.mu.Unlock()
		select {
		case <-r.more:
		case <-r.closed:
			r.mu.Lock()
			done := r.next >= len(r.all)
			r.mu.Unlock()
			if done {
				t.Fatalf("the events ended before %s:\n%s", what, r)
			}
		case <-deadline:
			t.Fatalf("no %s in %v; events:\n%s", what, limit, r)
		}
	}
}

func (r *asEvents) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, ev := range r.all {
		b.WriteString(string(ev.Kind) + " turn=" + ev.Turn + " stop=" + ev.Stop + " " + asClip(ev.Text, 200))
		if ev.Ask != nil {
			b.WriteString(" ask=" + ev.Ask.ID + " " + ev.Ask.Question)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func asKind(k EventKind) func(Event) bool { return func(ev Event) bool { return ev.Kind == k } }

func asTool(part string) func(Event) bool {
	return func(ev Event) bool { return ev.Kind == Tool && strings.Contains(ev.Text, part) }
}

// asStart runs cmd as the agent (its own process group, killed when the
// test ends) and starts the conversation over its pipes.
func asStart(t *testing.T, cmd *exec.Cmd, cfg Config) (Conversation, error) {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr testkit.LockedBuffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("the agent's stderr:\n%s", stderr.String())
		}
	})
	if cfg.Logf == nil {
		// The conversation may log after the test ends (its reader ends
		// with the agent): logging then would panic.
		var mu sync.Mutex
		ended := false
		t.Cleanup(func() { mu.Lock(); ended = true; mu.Unlock() })
		cfg.Logf = func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			if !ended {
				t.Logf(format, args...)
			}
		}
	}
	return Start(AppServer, Pipes{In: in, Out: out}, cfg)
}

// asCodex starts the real Codex's app-server as the preset's Talk runs
// it, against s, in a new git repository with a home of its own.
func asCodex(t *testing.T, s *modelapi.Server, asks bool) (Conversation, *asEvents, string) {
	t.Helper()
	codex := fwtest.RealAgent(t, "codex")
	p, _ := registry.PresetNamed("codex")
	talk, ok := p.TalkIn(string(AppServer))
	if !ok {
		t.Fatal("the codex preset holds no app-server conversation")
	}
	fill := strings.NewReplacer("{model}", "gpt-5-codex", "{base_url}", s.URL+"/v1")
	argv := []string{codex}
	for _, a := range talk.Argv[1:] {
		argv = append(argv, fill.Replace(a))
	}
	home, dir := t.TempDir(), fwtest.GitRepo(t)
	if err := os.Mkdir(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + home, "CODEX_HOME=" + filepath.Join(home, ".codex"), "OPENAI_API_KEY=sk-test", "PATH=" + os.Getenv("PATH")}
	conv, err := asStart(t, cmd, Config{Dir: dir, Model: "gpt-5-codex", Asks: asks})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { conv.Close() })
	return conv, asRecord(conv), dir
}

// A first turn: the plan as Prompt, Codex runs the script's shell step
// in the repository, says its result, and the turn ends with the usage
// the API reported; the session is Codex's thread.
func TestAppServerFirstTurn(t *testing.T) {
	s := fwtest.ScriptedAPI(t, modelapi.Step{Shell: "echo hello > hello.txt", Input: 300, Output: 30}, modelapi.Step{Text: "## Result\nwrote hello.txt", Input: 400, Output: 40})
	conv, evs, dir := asCodex(t, s, false)
	if id := conv.Session(); len(id) != 36 {
		t.Errorf("Session() = %q, want Codex's thread id", id)
	}
	if steered, err := conv.Steer("a note"); steered || err != nil {
		t.Errorf("Steer with no turn running: %v %v, want false and no error", steered, err)
	}
	if err := conv.Interrupt(); !errors.Is(err, ErrIdle) {
		t.Errorf("Interrupt with no turn running: %v, want ErrIdle", err)
	}
	if err := conv.Prompt("do the plan"); err != nil {
		t.Fatal(err)
	}
	started := evs.wait(t, "the turn's start", 30*time.Second, asKind(TurnStarted))
	if tool := evs.wait(t, "the shell step", 30*time.Second, asTool("echo hello > hello.txt")); tool.Turn != started.Turn {
		t.Errorf("the tool ran in turn %q, not %q", tool.Turn, started.Turn)
	}
	if msg := evs.wait(t, "the agent's message", 30*time.Second, asKind(Message)); msg.Text != "## Result\nwrote hello.txt" {
		t.Errorf("the message: %q", msg.Text)
	}
	end := evs.wait(t, "the turn's end", 30*time.Second, asKind(TurnEnded))
	if end.Turn != started.Turn || end.Stop != StopDone {
		t.Errorf("the end: %+v, want turn %s, %s", end, started.Turn, StopDone)
	}
	if tok := end.Tokens; tok == nil || tok.Input != 700 || tok.Output != 70 {
		t.Errorf("the turn's tokens: %+v, want the API's 700 in, 70 out", tok)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("hello.txt: %q %v", b, err)
	}
}

// A note sent while Codex's command runs reaches the same turn: the
// script's next step runs the command the note gives (ShellFrom), which
// it would not without the note.
func TestAppServerSteerChangesTheTurn(t *testing.T) {
	s := fwtest.ScriptedAPI(t, modelapi.Step{Shell: "sleep 5"},
		modelapi.Step{ShellFrom: "RUN: ", Text: "## Result\nno note came"}, modelapi.Step{Text: "## Result\nsteered"})
	conv, evs, dir := asCodex(t, s, false)
	if err := conv.Prompt("do the plan"); err != nil {
		t.Fatal(err)
	}
	started := evs.wait(t, "the turn's start", 30*time.Second, asKind(TurnStarted))
	slept := evs.wait(t, "the sleep", 30*time.Second, asTool("sleep 5"))
	sent := time.Now()
	steered, err := conv.Steer("RUN: touch steered.txt")
	acked := time.Since(sent)
	if !steered || err != nil {
		t.Fatalf("Steer during the turn: %v %v", steered, err)
	}
	note := evs.wait(t, "the note's command", 30*time.Second, asTool("touch steered.txt"))
	// Codex hands the note to the model once the running command ends:
	// about 5 s after the sleep began.
	t.Logf("steer: answered in %v; the note's command began %v after the steer, %v after the sleep's 5 s",
		acked, note.At.Sub(sent), note.At.Sub(slept.At.Add(5*time.Second)))
	if acked > time.Second {
		t.Errorf("Codex took %v to take the note, want ≤ 1s", acked)
	}
	if note.Turn != started.Turn {
		t.Errorf("the note ran in turn %q, not the steered %q", note.Turn, started.Turn)
	}
	end := evs.wait(t, "the turn's end", 30*time.Second, asKind(TurnEnded))
	if end.Turn != started.Turn || end.Stop != StopDone {
		t.Errorf("the end: %+v", end)
	}
	if _, err := os.Stat(filepath.Join(dir, "steered.txt")); err != nil {
		t.Errorf("the note's command did not run: %v", err)
	}
	if c := s.Calls(); !slices.ContainsFunc(c, func(c modelapi.Call) bool { return c.Step == 2 }) {
		t.Errorf("the API's calls: %+v, want the script's last step", c)
	}
}

// An interrupt ends the running turn at once (not after its 30 s
// command) and the conversation goes on: the next Prompt runs a turn.
func TestAppServerInterrupt(t *testing.T) {
	s := fwtest.ScriptedAPI(t, modelapi.Step{Shell: "sleep 30"}, modelapi.Step{Text: "## Result\nafter"}, modelapi.Step{Text: "## Result\nafter"})
	conv, evs, _ := asCodex(t, s, false)
	if err := conv.Prompt("do the plan"); err != nil {
		t.Fatal(err)
	}
	started := evs.wait(t, "the turn's start", 30*time.Second, asKind(TurnStarted))
	evs.wait(t, "the sleep", 30*time.Second, asTool("sleep 30"))
	if err := conv.Prompt("another"); !errors.Is(err, ErrBusy) {
		t.Errorf("Prompt during a turn: %v, want ErrBusy", err)
	}
	sent := time.Now()
	if err := conv.Interrupt(); err != nil {
		t.Fatal(err)
	}
	end := evs.wait(t, "the interrupted turn's end", 5*time.Second, asKind(TurnEnded))
	t.Logf("interrupt: the turn ended %v after it", time.Since(sent))
	if end.Turn != started.Turn || end.Stop != StopCancelled {
		t.Errorf("the end: %+v, want turn %s %s", end, started.Turn, StopCancelled)
	}
	if err := conv.Prompt("go on"); err != nil {
		t.Fatalf("Prompt after the interrupt: %v", err)
	}
	next := evs.wait(t, "the next turn's end", 30*time.Second, asKind(TurnEnded))
	if next.Turn == started.Turn || next.Stop != StopDone {
		t.Errorf("the next turn: %+v", next)
	}
}

// With asks, Codex's approval requests wait for Answer: an accepted
// command runs, a declined one does not, an answer twice or with an
// option not offered is refused, and an interrupt declines what waits.
func TestAppServerAsks(t *testing.T) {
	s := fwtest.ScriptedAPI(t, modelapi.Step{Shell: "touch approved.txt"}, modelapi.Step{Text: "## Result\none"},
		modelapi.Step{Shell: "touch declined.txt"}, modelapi.Step{Text: "## Result\ntwo"},
		modelapi.Step{Shell: "touch pending.txt"}, modelapi.Step{Text: "## Result\nthree"})
	conv, evs, dir := asCodex(t, s, true)
	ask := func(cmd string) *Ask {
		t.Helper()
		if err := conv.Prompt("do the plan"); err != nil {
			t.Fatal(err)
		}
		a := evs.wait(t, "the approval request for "+cmd, 30*time.Second, asKind(Asked)).Ask
		if !strings.Contains(a.Question, cmd) || len(a.Options) != 3 || a.Options[0].ID != "accept" || !a.Options[0].Allow || a.Options[2].Allow {
			t.Errorf("the ask: %+v", a)
		}
		return a
	}
	a := ask("touch approved.txt")
	if err := conv.Answer(a.ID, Reply{Option: "maybe"}); err == nil || !strings.Contains(err.Error(), `"maybe" is not an option`) {
		t.Errorf("an answer with no such option: %v", err)
	}
	if err := conv.Answer(a.ID, Reply{Option: "accept"}); err != nil {
		t.Fatal(err)
	}
	if err := conv.Answer(a.ID, Reply{Option: "accept"}); !errors.Is(err, ErrNoAsk) {
		t.Errorf("a second answer: %v, want ErrNoAsk", err)
	}
	evs.wait(t, "the first turn's end", 30*time.Second, asKind(TurnEnded))
	a = ask("touch declined.txt")
	if err := conv.Answer(a.ID, Reply{Deny: true}); err != nil {
		t.Fatal(err)
	}
	evs.wait(t, "the declined command's outcome", 30*time.Second, asTool("touch declined.txt' (declined)"))
	evs.wait(t, "the second turn's end", 30*time.Second, asKind(TurnEnded))
	a = ask("touch pending.txt")
	if err := conv.Interrupt(); err != nil {
		t.Fatal(err)
	}
	if end := evs.wait(t, "the third turn's end", 10*time.Second, asKind(TurnEnded)); end.Stop != StopCancelled {
		t.Errorf("the interrupted turn: %+v", end)
	}
	if err := conv.Answer(a.ID, Reply{Option: "accept"}); !errors.Is(err, ErrNoAsk) {
		t.Errorf("an answer after the interrupt: %v, want ErrNoAsk", err)
	}
	for file, want := range map[string]bool{"approved.txt": true, "declined.txt": false, "pending.txt": false} {
		if _, err := os.Stat(filepath.Join(dir, file)); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", file, err == nil, want)
		}
	}
}

// asShorten makes the timeouts short for a test of hostile agents.
func asShorten(t *testing.T) {
	hs, req, grace := asHandshakeTimeout, asRequestTimeout, asCloseGrace
	asHandshakeTimeout, asRequestTimeout, asCloseGrace = time.Second, time.Second, time.Second
	t.Cleanup(func() { asHandshakeTimeout, asRequestTimeout, asCloseGrace = hs, req, grace })
}

// asHostile starts testdata/appserver/hostile.sh doing mode.
func asHostile(t *testing.T, mode string) (Conversation, error) {
	t.Helper()
	return asStart(t, exec.Command("sh", filepath.Join("testdata", "appserver", "hostile.sh"), mode), Config{Dir: t.TempDir()})
}

// An agent that breaks the protocol before the conversation starts is
// refused with one line saying how, within the handshake's timeout.
func TestAppServerHostileStart(t *testing.T) {
	asShorten(t)
	for _, tc := range []struct{ mode, want string }{
		{"junk", `line 1 is not JSON-RPC: "this is not JSON-RPC"`},
		{"long", "a line of more than 4 MiB"},
		{"silent", "initialize: no answer from the agent in 1s"},
		{"refuse", "initialize: the agent refused it (-32000): not today"},
		{"nothread", "thread/start: the answer names no thread"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			began := time.Now()
			conv, err := asHostile(t, tc.mode)
			if conv != nil || err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Start: %v %v, want one line with %q", conv, err, tc.want)
			}
			// Close ran inside Start: the agent ignores its closed stdin,
			// and Start still returned.
			if took := time.Since(began); took > 5*time.Second {
				t.Errorf("Start took %v", took)
			}
		})
	}
}

// After the handshake: odd fields and unknown messages are skipped, not
// fatal; a failed turn ends with the agent's error; a line that is not
// JSON-RPC fails the conversation (a Failed event, then the events
// close); Close returns though the agent ignores it.
func TestAppServerHostileTurn(t *testing.T) {
	asShorten(t)
	conv, err := asHostile(t, "odd")
	if err != nil {
		t.Fatal(err)
	}
	evs := asRecord(conv)
	if conv.Session() != "thread-1" {
		t.Errorf("Session() = %q", conv.Session())
	}
	if err := conv.Prompt("go"); err != nil {
		t.Fatal(err)
	}
	end := evs.wait(t, "the failed turn's end", 5*time.Second, asKind(TurnEnded))
	if end.Stop != StopError || end.Text != "the model is gone" {
		t.Errorf("the end: %+v", end)
	}
	failed := evs.wait(t, "the failure", 5*time.Second, asKind(Failed))
	if !strings.Contains(failed.Text, `is not JSON-RPC: "[1,2,3]"`) {
		t.Errorf("the failure: %q", failed.Text)
	}
	<-evs.closed
	if err := conv.Prompt("again"); err == nil || !strings.Contains(err.Error(), "is not JSON-RPC") {
		t.Errorf("Prompt after the failure: %v, want why it failed", err)
	}
	began := time.Now()
	conv.Close()
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("Close took %v", took)
	}
}

// An agent that stops answering mid-conversation: Prompt gives up after
// its timeout; a late interrupt finds no turn; an agent that exits
// mid-turn fails the conversation.
func TestAppServerHostileSilenceAndExit(t *testing.T) {
	asShorten(t)
	conv, err := asHostile(t, "mute")
	if err != nil {
		t.Fatal(err)
	}
	if err := conv.Prompt("go"); err == nil || !strings.Contains(err.Error(), "turn/start: no answer from the agent in 1s") {
		t.Errorf("Prompt to a mute agent: %v", err)
	}
	began := time.Now()
	conv.Close()
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("Close of a mute agent took %v", took)
	}
	if err := conv.Prompt("go"); !errors.Is(err, ErrClosed) {
		t.Errorf("Prompt after Close: %v, want ErrClosed", err)
	}

	// An interrupt the agent refuses because the turn has just ended is
	// no error: no turn runs.
	conv, err = asHostile(t, "late")
	if err != nil {
		t.Fatal(err)
	}
	evs := asRecord(conv)
	if err := conv.Prompt("go"); err != nil {
		t.Fatal(err)
	}
	evs.wait(t, "the turn's start", 5*time.Second, asKind(TurnStarted))
	if err := conv.Interrupt(); !errors.Is(err, ErrIdle) {
		t.Errorf("an interrupt as the turn ended: %v, want ErrIdle", err)
	}
	conv.Close()

	conv, err = asHostile(t, "crash")
	if err != nil {
		t.Fatal(err)
	}
	evs = asRecord(conv)
	if err := conv.Prompt("go"); err != nil {
		t.Fatal(err)
	}
	evs.wait(t, "the turn's start", 5*time.Second, asKind(TurnStarted))
	if failed := evs.wait(t, "the failure", 5*time.Second, asKind(Failed)); !strings.Contains(failed.Text, "the agent's output ended") {
		t.Errorf("the failure: %q", failed.Text)
	}
	<-evs.closed
	conv.Close()
}

// A driver slower than the agent loses nothing: the reader waits while
// the buffer is full, and the events come in order once read; a driver
// that stops reading can still Close.
func TestAppServerSlowDriver(t *testing.T) {
	asShorten(t)
	conv, err := asHostile(t, "flood")
	if err != nil {
		t.Fatal(err)
	}
	if err := conv.Prompt("go"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the agent fills the buffer meanwhile
	n := 0
	for ev := range conv.Events() {
		if ev.Kind == TurnEnded {
			break
		}
		if want := "step " + strconv.Itoa(n); ev.Kind != Tool || ev.Text != want {
			t.Fatalf("event %d: %+v, want the tool %q", n, ev, want)
		}
		n++
	}
	if n != 1000 {
		t.Errorf("%d tools before the turn's end, want 1000", n)
	}

	conv, err = asHostile(t, "flood")
	if err != nil {
		t.Fatal(err)
	}
	if err := conv.Prompt("go"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	began := time.Now()
	conv.Close()
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("Close with the events unread took %v", took)
	}
}
