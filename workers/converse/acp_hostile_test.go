package converse_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/workers/converse"
)

// The handshake a fake agent in sh answers: initialize (id 1) and
// session/new (id 2); its session is s1. The prompt is id 3.
const handshake = `read l; echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}'
read l; echo '{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}'
`

// fake starts sh -c script as an ACP agent.
func fake(t *testing.T, script string, cfg converse.Config) (*agent, error) {
	t.Helper()
	return fakeIn(t, t.TempDir(), script, cfg)
}

func fakeIn(t *testing.T, dir, script string, cfg converse.Config) (*agent, error) {
	t.Helper()
	return startAgent(t, dir, nil, []string{"sh", "-c", script}, cfg)
}

// An agent that breaks the protocol before or during the handshake is
// refused by Start with the reason, quickly; Close returns though the
// agent ignores its closed stdin.
func TestACPHostileHandshake(t *testing.T) {
	// Not parallel with other tests: it shortens the package's bounds
	// (parallel tests start once it is done).
	t.Cleanup(converse.SetACPTimes(2*time.Second, time.Second))
	for _, c := range []struct{ name, script, want string }{
		{"junk", `echo 'Welcome to the agent!'; sleep 30`, "not JSON"},
		{"endless line", `head -c 6000000 /dev/zero | tr '\0' a; sleep 30`, "over 4 MiB"},
		{"silent", `exec sleep 30`, "did not answer within 2s"},
		{"exits", `read l; exit 3`, "initialize"},
		{"old protocol", `read l; echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":0}}'; sleep 30`, "version 0"},
		{"no session", `read l; echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}'; read l; echo '{"jsonrpc":"2.0","id":2,"result":{}}'; sleep 30`, "no sessionId"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			a, err := fake(t, c.script, converse.Config{})
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Start: %v, want one line with %q", err, c.want)
			}
			if d := time.Since(start); d > 4*time.Second {
				t.Errorf("Start took %s to refuse", d)
			}
			if a != nil && a.conv != nil {
				t.Errorf("a failed Start gave a conversation")
			}
		})
	}
}

// An agent that breaks the protocol mid-turn: the turn ends in error, a
// Failed event says why, Events closes, and the methods say ErrClosed.
func TestACPHostileTurn(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, after, want string }{
		{"junk", `echo 'panic: oh no'; sleep 30`, "not JSON"},
		{"endless line", `head -c 5000000 /dev/zero | tr '\0' a; sleep 30`, "over 4 MiB"},
		{"exits", `exit 0`, "output ended"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			chunk := `echo '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}'`
			a, err := fake(t, handshake+"read l; "+chunk+"; "+c.after, converse.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if err := a.conv.Prompt("go"); err != nil {
				t.Fatal(err)
			}
			evs := a.until(t, converse.Failed, 10*time.Second)
			last := evs[len(evs)-1]
			if !strings.Contains(last.Text, c.want) || !hasKind(evs, converse.Message, "hi") || !hasKind(evs, converse.TurnEnded, "") {
				t.Errorf("events: %+v, want a message, the turn's end and a failure saying %q", evs, c.want)
			}
			if _, ok := <-a.conv.Events(); ok {
				t.Error("Events did not close after the failure")
			}
			if err := a.conv.Prompt("again"); err != converse.ErrClosed {
				t.Errorf("Prompt after the end: %v", err)
			}
		})
	}
}

// Odd but well-formed messages: an unknown stop reason ends the turn in
// error; updates of another session, of unknown kinds, or with missing
// fields are passed over; a permission request without options is
// answered cancelled, an interrupt with no answer from the agent ends
// the turn after the grace.
func TestACPOddAgent(t *testing.T) {
	t.Cleanup(converse.SetACPTimes(5*time.Second, time.Second))
	script := handshake + `read l
echo '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"other","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"not mine"}}}}'
echo '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"teleport"}}}'
echo '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1"}}'
printf '%s\n' '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"line one\nline two","locations":[{"path":"/w/a.go"},{}]}}}'
echo '{"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s1","options":[],"toolCall":{"toolCallId":"t1"}}}'
read answer; echo "$answer" > answer.json
echo '{"jsonrpc":"2.0","id":99,"result":{}}'
echo '{"jsonrpc":"2.0","id":3,"result":{"stopReason":"banana"}}'
read l; sleep 30`
	dir := t.TempDir()
	a, err := fakeIn(t, dir, script, converse.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.conv.Prompt("go"); err != nil {
		t.Fatal(err)
	}
	evs := a.until(t, converse.TurnEnded, 10*time.Second)
	answer, _ := os.ReadFile(filepath.Join(dir, "answer.json"))
	end := evs[len(evs)-1]
	if end.Stop != converse.StopError || !strings.Contains(end.Text, "banana") {
		t.Errorf("the turn's end: %+v", end)
	}
	if hasKind(evs, converse.Message, "not mine") || !hasTool(evs, "line one line two") {
		t.Errorf("events: %+v", evs)
	}
	if !strings.Contains(string(answer), `"outcome":{"outcome":"cancelled"}`) {
		t.Errorf("the permission request without options was answered: %s", answer)
	}
	// The agent reads the next prompt and says nothing: an interrupt
	// ends the turn after the grace.
	if err := a.conv.Prompt("again"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := a.conv.Interrupt(); err != nil {
		t.Fatal(err)
	}
	evs = a.until(t, converse.TurnEnded, 5*time.Second)
	if end := evs[len(evs)-1]; end.Stop != converse.StopCancelled {
		t.Errorf("the ignored interrupt ended the turn %+v", end)
	}
}

// With asks, an interrupt answers the waiting request "cancelled" and
// sends session/cancel; answers that fit no request are refused.
func TestACPInterruptAnswersAsks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := handshake + `read l
echo '{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"sessionId":"s1","options":[{"optionId":"y","name":"Yes","kind":"allow_once"},{"optionId":"n","name":"No","kind":"reject_once"}],"toolCall":{"toolCallId":"t1","title":"rm -rf /","kind":"execute"}}}'
read a; read b; printf '%s\n%s\n' "$a" "$b" > answers.json
echo '{"jsonrpc":"2.0","id":3,"result":{"stopReason":"cancelled"}}'
read l; sleep 30`
	a, err := fakeIn(t, dir, script, converse.Config{Asks: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.conv.Prompt("go"); err != nil {
		t.Fatal(err)
	}
	evs := a.until(t, converse.Asked, 10*time.Second)
	ask := evs[len(evs)-1].Ask
	if ask.Question != "The agent asks to execute: rm -rf /" || len(ask.Options) != 2 || !ask.Options[0].Allow || ask.Options[1].Allow {
		t.Errorf("the request: %+v", *ask)
	}
	for _, r := range []converse.Reply{{Option: "maybe"}, {Text: "sure"}, {}} {
		if err := a.conv.Answer(ask.ID, r); err == nil || errors.Is(err, converse.ErrNoAsk) {
			t.Errorf("Answer %+v: %v, want a refusal", r, err)
		}
	}
	if err := a.conv.Interrupt(); err != nil {
		t.Fatal(err)
	}
	evs = a.until(t, converse.TurnEnded, 10*time.Second)
	if end := evs[len(evs)-1]; end.Stop != converse.StopCancelled {
		t.Errorf("the turn ended %+v", end)
	}
	if err := a.conv.Answer(ask.ID, converse.Reply{Option: "y"}); !errors.Is(err, converse.ErrNoAsk) {
		t.Errorf("an answer after the interrupt: %v, want ErrNoAsk", err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "answers.json"))
	if !strings.Contains(string(got), `"id":7,"result":{"outcome":{"outcome":"cancelled"}}`) || !strings.Contains(string(got), `"method":"session/cancel"`) {
		t.Errorf("the agent read:\n%s", got)
	}
}

// A driver that stops reading Events does not lose them nor break the
// conversation: the agent's updates wait in its pipe until it reads.
func TestACPSlowDriver(t *testing.T) {
	t.Parallel()
	const n = 3000
	script := handshake + `read l; i=0
while [ $i -lt ` + strconv.Itoa(n) + ` ]; do
echo '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t'$i'","title":"step '$i'"}}}'
i=$((i+1)); done
echo '{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}'
read l; sleep 30`
	a, err := fake(t, script, converse.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.conv.Prompt("go"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	evs := a.until(t, converse.TurnEnded, 20*time.Second)
	tools := 0
	for _, e := range evs {
		if e.Kind == converse.Tool {
			if want := "step " + strconv.Itoa(tools); e.Text != want {
				t.Fatalf("tool event %d is %q, want %q", tools, e.Text, want)
			}
			tools++
		}
	}
	if tools != n || evs[len(evs)-1].Stop != converse.StopDone {
		t.Errorf("%d tool events of %d; the end: %+v", tools, n, evs[len(evs)-1])
	}
}
