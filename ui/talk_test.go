package ui

import (
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// talker is a running worker that talks: a real process the cockpit can
// check (the fake driver, as `work-once --agent-id`), its state file, and
// a stand-in for its driver's side of the mail folder that answers each
// message as reply says and records what came.
type talker struct {
	t     *testing.T
	p     *project
	st    look.State
	mu    sync.Mutex
	got   []claims.Message
	reply func(claims.Message) look.MailReply
}

// askPermission is a permission request as a driver puts it in the state
// file.
var askPermission = &claims.AskRecord{ID: "perm-1", Question: "Run `make deploy` in the worktree?", Since: float64(testNow.Add(-3 * time.Minute).Unix()),
	Options: []claims.AskOption{{ID: "once", Label: "Allow once", Allow: true}, {ID: "always", Label: "Always allow", Allow: true}, {ID: "no", Label: "Reject"}}}

// startTalker starts agent's stand-in process and its driver's mailbox,
// and writes its state file asking ask (nil: asking nothing).
func startTalker(t *testing.T, p *project, agent string, ask *claims.AskRecord) *talker {
	t.Helper()
	p.configure(t, agent, "sleep=60s\n")
	cmd := exec.Command(testkit.FakeDriver(t), "work-once", "--root", p.dir, "--agent-id", agent)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testkit.KillGroup(cmd.Process.Pid); cmd.Wait() })
	// The fake driver's argv says it started: its cmdline is then
	// work-once's.
	p.fakeArgv(t, agent)
	tk := &talker{t: t, p: p, reply: func(claims.Message) look.MailReply {
		return look.MailReply{Outcome: look.MailSteered, Reason: "into the running turn"}
	}}
	tk.st = look.State{PID: cmd.Process.Pid, AgentID: agent, Tier: "mid", Plan: "in-progress/export-pdf.md", Host: look.Hostname(),
		State: look.StateRunning, Started: look.Stamp{Time: testNow.Add(-10 * time.Minute)}, LastHeartbeat: look.Stamp{Time: testNow},
		HeartbeatEvery: 30, Note: "turn 1", Agent: &look.Proc{PID: cmd.Process.Pid}, Asking: ask}
	tk.write()
	box, err := look.OpenMailbox(p.dir, agent)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(box.Close)
	go func() {
		for m := range box.Messages() {
			tk.mu.Lock()
			tk.got = append(tk.got, m)
			rep := tk.reply(m)
			tk.mu.Unlock()
			box.Reply(m.ID, rep)
		}
	}()
	return tk
}

// setReply makes f the driver's answer to the messages from now on.
func (tk *talker) setReply(f func(claims.Message) look.MailReply) {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	tk.reply = f
}

// setAsking writes the state file asking a (nil: nothing).
func (tk *talker) setAsking(a *claims.AskRecord) {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	tk.st.Asking = a
	tk.write()
}

// write writes the state file; the caller holds mu once the mailbox runs.
func (tk *talker) write() {
	tk.t.Helper()
	if err := look.WriteState(tk.p.dir, tk.st); err != nil {
		tk.t.Fatal(err)
	}
}

// messages are what the driver's mailbox took so far.
func (tk *talker) messages() []claims.Message {
	tk.mu.Lock()
	defer tk.mu.Unlock()
	return append([]claims.Message(nil), tk.got...)
}

// The Workers pane shows a run waiting for input, t sends it a note
// through its mail folder and says how the driver took it, i interrupts
// after a confirm, and a refusal is said in the error style.
func TestWorkersTellAndInterrupt(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := startTalker(t, p, "mid-7", askPermission)
	h := newHarness(t, p, 160, 40)
	h.selectWorker("mid-7")
	if r := row(h.view(), " mid-7 "); !strings.Contains(r, "? waiting for input") {
		t.Fatalf("the row of a run waiting for input: %q\n%s", r, h.view())
	}
	if f := h.footer(); !strings.Contains(f, "t tell") || !strings.Contains(f, "i interrupt") {
		t.Errorf("the footer names neither t nor i: %q", f)
	}
	h.press("t")
	d := h.m.dialogShown()
	if d == nil || d.Input == nil || d.Title != "tell mid-7" {
		t.Fatalf("t opened no note dialog:\n%s", h.view())
	}
	h.press("enter") // an empty note is refused in the dialog
	if h.m.dialogShown() == nil {
		t.Fatal("an empty note closed the dialog")
	}
	h.typeText("use the v2 API")
	h.press("enter")
	if h.dialogOpen() {
		t.Fatalf("enter left the dialog open:\n%s", h.view())
	}
	if f := h.footer(); !strings.Contains(f, "mid-7: steered (into the running turn)") {
		t.Errorf("the outcome: %q", f)
	}
	got := tk.messages()
	if len(got) != 1 || got[0].Kind != claims.MailTell || got[0].Text != "use the v2 API" || got[0].By != "op" || got[0].ID == "" {
		t.Fatalf("the driver took %+v", got)
	}

	// i asks first; n cancels, y sends; the driver's refusal is an error.
	h.press("i")
	if d := h.m.dialogShown(); d == nil || !strings.Contains(d.Title, "Interrupt mid-7") {
		t.Fatalf("i opened no confirm:\n%s", h.view())
	}
	h.press("n")
	if h.dialogOpen() || len(tk.messages()) != 1 {
		t.Fatalf("n did not cancel: %d messages", len(tk.messages()))
	}
	tk.setReply(func(claims.Message) look.MailReply { return look.Refused("no turn is running") })
	h.press("i", "y")
	if got := tk.messages(); len(got) != 2 || got[1].Kind != claims.MailInterrupt {
		t.Fatalf("the driver took %+v", got)
	}
	if f := h.footer(); !strings.Contains(f, "interrupt: mid-7 refused: no turn is running") || !h.m.statusErr {
		t.Errorf("a refusal: %q (error style %v)", f, h.m.statusErr)
	}

	// The detail shows the question and its options.
	h.press("enter")
	for _, want := range []string{"Run `make deploy` in the worktree?", "Allow once (allows)", "perm-1"} {
		if !strings.Contains(h.view(), want) {
			t.Errorf("the detail lacks %q:\n%s", want, h.view())
		}
	}
}

// A worker with no agent running, and one on another machine, are
// refused with the reason: nothing is sent.
func TestTellRefusedWithoutARun(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addWorkers(t)
	h := newHarness(t, p, 160, 40)
	h.selectWorker("reasoner-1") // here, its process gone
	h.press("t")
	if h.dialogOpen() {
		t.Fatal("t opened a dialog for a dead worker")
	}
	if f := h.footer(); !strings.Contains(f, "tell: reasoner-1 has no run going") {
		t.Errorf("t on a dead worker: %q", f)
	}
	// A run on another machine, with no claims backend to carry a message
	// there: refused in one line.
	st := look.State{PID: 4200, AgentID: "mid-9", Plan: "in-progress/export-pdf.md", Host: "build-7", State: look.StateRunning,
		Started: look.Stamp{Time: testNow.Add(-time.Minute)}, LastHeartbeat: look.Stamp{Time: testNow}, HeartbeatEvery: 30,
		Agent: &look.Proc{PID: 4201}, Asking: askPermission}
	if err := look.WriteState(p.dir, st); err != nil {
		t.Fatal(err)
	}
	h.send(stateChangeMsg{})
	h.selectWorker("mid-9")
	h.press("t")
	if f := h.footer(); h.dialogOpen() || !strings.Contains(f, "tell: mid-9 runs on build-7, and this project's claims backend keeps no other machine's workers") {
		t.Errorf("t on another machine's worker: %q", f)
	}
	h.press("7")
	inboxOf(&h.m).GoTo("asking\x00mid-9")
	h.m.syncKeys()
	h.press("y")
	if f := h.footer(); !strings.Contains(f, "answer: mid-9 runs on build-7") || !h.m.statusErr {
		t.Errorf("y on another machine's worker: %q", f)
	}
}

// The Inbox lists a run waiting for input beside the paused ones; y
// allows it with its first allowing option, and the row goes once the
// state file no longer asks. Enter answers another in words.
func TestInboxAnswersARunWaitingForInput(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := startTalker(t, p, "mid-7", askPermission)
	tk.setReply(func(claims.Message) look.MailReply {
		// The driver hands the answer on and the question leaves its
		// state file (the mailbox's goroutine holds mu).
		tk.st.Asking = nil
		tk.write()
		return look.MailReply{Outcome: look.MailAnswered}
	})
	h := newHarness(t, p, 160, 40)
	h.press("7")
	r := row(h.view(), " mid-7 ")
	for _, want := range []string{"export-pdf", "? waiting for input", "3m", "3 options", "Run `make deploy` in the worktree?"} {
		if !strings.Contains(r, want) {
			t.Errorf("the inbox row lacks %q: %q\n%s", want, r, h.view())
		}
	}
	inboxOf(&h.m).GoTo("asking\x00mid-7")
	h.m.syncKeys()
	if v := h.view(); !strings.Contains(v, "1. Allow once") || !strings.Contains(v, "y allows") {
		t.Errorf("the preview:\n%s", v)
	}
	if f := h.footer(); !strings.Contains(f, "y allow") || !strings.Contains(f, "n deny") || !strings.Contains(f, "enter answer") {
		t.Errorf("the footer: %q", f)
	}
	h.press("y")
	got := tk.messages()
	if len(got) != 1 || got[0].Kind != claims.MailAnswer || got[0].Ask != "perm-1" || got[0].Option != "once" || got[0].Deny {
		t.Fatalf("y sent %+v", got)
	}
	if f := h.footer(); !strings.Contains(f, "mid-7: answered") {
		t.Errorf("the outcome: %q", f)
	}
	h.send(stateChangeMsg{})
	if v := h.view(); strings.Contains(v, "waiting for input") {
		t.Errorf("the answered run is still listed:\n%s", v)
	}

	// A question in words: enter, typed text, enter.
	tk.setAsking(&claims.AskRecord{ID: "q-2", Question: "Which database?", Since: float64(testNow.Unix())})
	h.send(stateChangeMsg{})
	if !inboxOf(&h.m).GoTo("asking\x00mid-7") {
		t.Fatalf("the second question is not listed:\n%s", h.view())
	}
	h.m.syncKeys()
	h.press("y") // nothing to allow: refused with the reason
	if f := h.footer(); !strings.Contains(f, "offers nothing to allow") || len(tk.messages()) != 1 {
		t.Errorf("y on a question: %q", f)
	}
	h.press("enter")
	if d := h.m.dialogShown(); d == nil || d.Input == nil || len(d.Choices) != 0 {
		t.Fatalf("enter opened no answer dialog:\n%s", h.view())
	}
	h.typeText("postgres 16")
	h.press("enter")
	if got := tk.messages(); len(got) != 2 || got[1].Ask != "q-2" || got[1].Text != "postgres 16" || got[1].Option != "" {
		t.Fatalf("enter sent %+v", got)
	}
}

// Enter on a permission request picks an option with tab; n denies.
func TestInboxAnswerPicksAnOptionOrDenies(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := startTalker(t, p, "mid-7", askPermission)
	tk.setReply(func(claims.Message) look.MailReply { return look.MailReply{Outcome: look.MailAnswered} })
	h := newHarness(t, p, 160, 40)
	h.press("7")
	inboxOf(&h.m).GoTo("asking\x00mid-7")
	h.m.syncKeys()
	h.press("enter")
	if d := h.m.dialogShown(); d == nil || len(d.Choices) != 3 || string(d.Choices[2]) != "3 Reject" {
		t.Fatalf("the answer dialog: %+v", h.m.dialogShown())
	}
	h.press("tab", "enter")
	h.press("n")
	got := tk.messages()
	if len(got) != 2 || got[0].Option != "always" || got[0].Text != "" || !got[1].Deny || got[1].Ask != "perm-1" {
		t.Fatalf("the driver took %+v", got)
	}
}

// A viewer's session lists the run but may not answer it.
func TestViewerCannotAnswer(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	tk := startTalker(t, p, "mid-7", askPermission)
	p.tree.ReadOnly = true
	opt := p.options()
	opt.ReadOnly = true
	h := newHarnessWith(t, p, opt, 160, 40)
	h.press("7")
	inboxOf(&h.m).GoTo("asking\x00mid-7")
	h.m.syncKeys()
	h.press("y")
	if f := h.footer(); !strings.Contains(f, "read-only") {
		t.Errorf("y in a viewer's session: %q", f)
	}
	h.press("enter")
	if h.dialogOpen() {
		t.Error("enter opened an answer dialog for a viewer")
	}
	h.selectWorker("mid-7")
	h.press("t")
	if h.dialogOpen() {
		t.Error("t opened a dialog for a viewer")
	}
	if len(tk.messages()) != 0 {
		t.Errorf("a viewer sent %+v", tk.messages())
	}
}

// A question arriving while the cockpit is open is a notice, once: the
// notice list shows it and the notifier is offered it, and the same
// question on the next look is not news.
func TestAskingIsANoticeOnce(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	var mu sync.Mutex
	var offered []model.Notice
	opt := p.options()
	opt.Out, opt.NoBell = &bells{}, true
	opt.Notify = func(ns []model.Notice) { mu.Lock(); offered = append(offered, ns...); mu.Unlock() }
	h := newHarnessWith(t, p, opt, 120, 30)
	at := look.Stamp{Time: p.tree.Now()}
	st := look.State{PID: 4200, AgentID: "mid-9", Plan: "in-progress/export-pdf.md", Host: "elsewhere", HeartbeatEvery: 60,
		Started: at, LastHeartbeat: at, State: look.StateRunning, Agent: &look.Proc{PID: 4201}, Asking: askPermission}
	if err := look.WriteState(p.dir, st); err != nil {
		t.Fatal(err)
	}
	h.send(stateChangeMsg{})
	h.send(stateChangeMsg{})
	mu.Lock()
	var asks []string
	for _, n := range offered {
		if n.Kind == model.NoticeAsking {
			asks = append(asks, n.ID+" "+n.Text)
		}
	}
	mu.Unlock()
	if len(asks) == 0 || !strings.Contains(asks[0], "mid-9 waits for input on in-progress/export-pdf.md: Run `make deploy` in the worktree?") {
		t.Fatalf("the notifier was offered %v", asks)
	}
	h.press("N")
	if v := h.view(); strings.Count(v, "mid-9 waits for input") != 1 {
		t.Errorf("the notice list:\n%s", v)
	}
}
