package talktest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/modelapi"
	"github.com/fleetwatch/fleetwatch/internal/testkit/agentkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// agentCLI is one real agent CLI and the protocol its endpoint talks.
type agentCLI struct {
	preset, talk, model, key string
	// api is the path its base_url takes after the scripted API's URL.
	api string
	// steers says a note reaches the running turn (else the next turn).
	steers bool
}

var clis = []agentCLI{
	{preset: "opencode", talk: "acp", model: "anthropic/claude-sonnet-4-5", key: "ANTHROPIC_API_KEY=sk-ant-test", api: "/v1"},
	{preset: "codex", talk: "app-server", model: "gpt-5-codex", key: "OPENAI_API_KEY=sk-test", api: "/v1", steers: true},
	{preset: "claude", talk: "stream-json", model: "sonnet", key: "ANTHROPIC_API_KEY=sk-ant-test", steers: true},
}

// talkRun is a driver talking to c's real CLI on plan "talk" of a fresh
// project, against api.
type talkRun struct {
	dir string
	env []string
	cmd *exec.Cmd
	out *strings.Builder
}

func startTalk(t *testing.T, c agentCLI, api *modelapi.Server, asks bool) *talkRun {
	return startTalkOn(t, c, api, asks, fwtest.Plan{Rel: "features/talk.md"})
}

func startTalkOn(t *testing.T, c agentCLI, api *modelapi.Server, asks bool, plan fwtest.Plan) *talkRun {
	t.Helper()
	fwtest.NeedLandlock(t, 4)
	bin := fwtest.RealAgent(t, c.preset)
	dir := fwtest.GitProject(t, plan)
	endpoints := "endpoints:\n  - name: e\n    tier: mid\n    model: " + c.model + "\n    agent: " + c.preset +
		"\n    talk: " + c.talk + "\n    base_url: " + api.URL + c.api + "\n"
	if asks {
		endpoints += "    asks: true\n"
	}
	agentkit.WriteFile(t, dir, "endpoints.yaml", endpoints)
	if os.Getenv("TALK_UNCONTAINED") != "" {
		fwtest.Uncontained(t, dir)
	}
	env := agentkit.HomeFor(t, c.preset, bin, c.key)
	// A heartbeat each 3 s: a budget extended is seen within it.
	cmd := fwtest.Cmd(dir, env, "work-once", "--run", "--ensure-worktree", "--endpoint", "e", "--agent-id", "w1", "--slug", "talk", "--lease-ttl", "9")
	tr := &talkRun{dir: dir, env: env, cmd: cmd, out: &strings.Builder{}}
	cmd.Stdout, cmd.Stderr = tr.out, tr.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return tr
}

// waitLog waits until the worker's log holds want.
func (tr *talkRun) waitLog(t *testing.T, want string, limit time.Duration) {
	t.Helper()
	for end := time.Now().Add(limit); !strings.Contains(logOf(tr.dir, "w1"), want); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the log did not say %q in %v:\n%s\n%s", want, limit, logOf(tr.dir, "w1"), tr.out)
		}
	}
}

// finish waits for the run to end well and the plan to wait for review.
func (tr *talkRun) finish(t *testing.T) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- tr.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the run: %v\n%s\nlog:\n%s", err, tr.out, logOf(tr.dir, "w1"))
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("the run did not end\nlog:\n%s", logOf(tr.dir, "w1"))
	}
	if !strings.Contains(logOf(tr.dir, "w1"), "review-needed/talk.md waits for review") {
		t.Errorf("the run did not hand its plan to review:\n%s", logOf(tr.dir, "w1"))
	}
}

// tell sends a note from this machine and returns how long the driver took
// to answer (the note is then with the agent: steered, or sent as a turn).
func (tr *talkRun) tell(t *testing.T, note, want string) time.Duration {
	t.Helper()
	start := time.Now()
	r := fwtest.Run(t, tr.dir, "tell", "w1", note)
	took := time.Since(start)
	if r.Code != 0 || !strings.Contains(r.Stdout, want) {
		t.Fatalf("tell: %v\nlog:\n%s", r, logOf(tr.dir, "w1"))
	}
	return took
}

// committed is name on the plan's branch, "" when it is not there.
func committed(t *testing.T, dir, name string) string {
	out, err := exec.Command("git", "-C", dir, "show", "refs/heads/feature/talk:"+name).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// commitCmd is a shell command that writes name and commits it.
func commitCmd(name string) string {
	return "echo " + name + " > " + name + " && git add " + name + " && git -c user.name=a -c user.email=a@b commit -qm " + name
}

// A note sent while the agent works changes what it does next: steered
// into the running turn where the protocol steers, else sent as the next
// turn when this one ends; the run then ends as a one-shot run would.
func TestNoteChangesWhatTheAgentDoesNext(t *testing.T) {
	for _, c := range clis {
		t.Run(c.preset+"/"+c.talk, func(t *testing.T) {
			t.Parallel()
			steps := []modelapi.Step{{Shell: "echo working && sleep 4"}}
			if !c.steers {
				steps = append(steps, modelapi.Step{Text: "the first turn is done"})
			}
			steps = append(steps, modelapi.Step{ShellFrom: "RUN: ", Text: "no note came"}, modelapi.Step{Text: "## Result\ndone"})
			api := fwtest.ScriptedAPI(t, steps...)
			tr := startTalk(t, c, api, false)
			tr.waitLog(t, "agent: ", 90*time.Second)
			want := "w1: queued"
			if c.steers {
				want = "w1: steered"
			}
			took := tr.tell(t, "RUN: "+commitCmd("noted.txt"), want)
			t.Logf("%s took the note in %v", c.talk, took)
			tr.finish(t)
			if got := committed(t, tr.dir, "noted.txt"); got != "noted.txt" {
				t.Errorf("the note's command did not run: noted.txt %q\nlog:\n%s", got, logOf(tr.dir, "w1"))
			}
			wantEvent(t, tr.dir, "tell", "tester", "RUN: ")
		})
	}
}

// An interrupt ends the running turn (a 30 s command) within seconds
// without ending the run, which then waits for a note; the note starts the
// next turn.
func TestInterruptEndsTheTurnNotTheRun(t *testing.T) {
	for _, c := range clis {
		t.Run(c.preset+"/"+c.talk, func(t *testing.T) {
			t.Parallel()
			api := fwtest.ScriptedAPI(t, modelapi.Step{Shell: "echo working && sleep 30"}, modelapi.Step{ShellFrom: "RUN: ", Text: "no note came"},
				modelapi.Step{Text: "## Result\ndone"})
			tr := startTalk(t, c, api, false)
			tr.waitLog(t, "agent: ", 90*time.Second)
			start := time.Now()
			if r := fwtest.Run(t, tr.dir, "interrupt", "w1"); r.Code != 0 || !strings.Contains(r.Stdout, "w1: interrupted") {
				t.Fatalf("interrupt: %v\nlog:\n%s", r, logOf(tr.dir, "w1"))
			}
			tr.waitLog(t, "waits for a note", 20*time.Second)
			t.Logf("the turn ended %v after the interrupt", time.Since(start))
			if st := stateNow(tr.dir, "w1"); st.Agent == nil || st.Plan == "" {
				t.Fatalf("the interrupt ended the run: %+v", st)
			}
			tr.tell(t, "RUN: "+commitCmd("after.txt"), "w1: steered")
			tr.finish(t)
			if got := committed(t, tr.dir, "after.txt"); got != "after.txt" {
				t.Errorf("the note after the interrupt did not run: %q\nlog:\n%s", got, logOf(tr.dir, "w1"))
			}
		})
	}
}

// With asks: true the agent's permission request waits in the inbox (the
// state says it waits for input) until a person allows it; the command
// then runs and the run goes on.
func TestPermissionRequestWaitsForItsAnswer(t *testing.T) {
	for _, c := range clis {
		t.Run(c.preset+"/"+c.talk, func(t *testing.T) {
			t.Parallel()
			api := fwtest.ScriptedAPI(t, modelapi.Step{Shell: commitCmd("allowed.txt")}, modelapi.Step{Text: "## Result\ndone"})
			tr := startTalk(t, c, api, true)
			st := waitAsking(t, tr.dir, "w1")
			if !strings.Contains(st.Note, "waiting for input") || len(st.Asking.Options) == 0 {
				t.Fatalf("the state while asking: %+v, note %q", st.Asking, st.Note)
			}
			if got := committed(t, tr.dir, "allowed.txt"); got != "" {
				t.Fatalf("the command ran before it was allowed: %q", got)
			}
			if r := fwtest.Run(t, tr.dir, "answer", "w1", "--allow"); r.Code != 0 || !strings.Contains(r.Stdout, "w1: answered") {
				t.Fatalf("answer --allow: %v\nlog:\n%s", r, logOf(tr.dir, "w1"))
			}
			tr.finish(t)
			if got := committed(t, tr.dir, "allowed.txt"); got != "allowed.txt" {
				t.Errorf("the allowed command did not run: %q\nlog:\n%s", got, logOf(tr.dir, "w1"))
			}
			wantEvent(t, tr.dir, "answer", "tester", "answered")
		})
	}
}

// A conversation paused at its plan's budget is frozen where it is: a
// note then waits (queued), and once the budget is extended the
// conversation goes on from where it stopped, then hears the note.
func TestPausedConversationResumesWhereItWas(t *testing.T) {
	for _, c := range clis {
		t.Run(c.preset+"/"+c.talk, func(t *testing.T) {
			t.Parallel()
			api := fwtest.ScriptedAPI(t, modelapi.Step{Shell: "echo one > one.txt", Input: 1500, Output: 100},
				modelapi.Step{Shell: commitCmd("two.txt")}, modelapi.Step{Text: "the first turn is done"},
				modelapi.Step{ShellFrom: "RUN: ", Text: "no note came"}, modelapi.Step{Text: "## Result\ndone"})
			tr := startTalkOn(t, c, api, false, fwtest.Plan{Rel: "features/talk.md", Fields: "Budget: 1k tokens"})
			tr.waitLog(t, "budget reached", 90*time.Second)
			tr.tell(t, "RUN: "+commitCmd("noted.txt"), "w1: queued")
			if r := fwtest.Run(t, tr.dir, "budget", "extend", "talk", "--by", "100k"); r.Code != 0 {
				t.Fatalf("budget extend: %v\nlog:\n%s", r, logOf(tr.dir, "w1"))
			}
			tr.finish(t)
			for _, f := range []string{"two.txt", "noted.txt"} {
				if got := committed(t, tr.dir, f); got != f {
					t.Errorf("%s after the resume: %q\nlog:\n%s", f, got, logOf(tr.dir, "w1"))
				}
			}
		})
	}
}
