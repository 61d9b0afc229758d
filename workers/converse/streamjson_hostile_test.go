package converse_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/workers/converse"
)

// sjFake runs a shell script as the agent: what a broken or hostile agent
// could write.
func sjFake(t *testing.T, script string) (*sjAgent, error) {
	t.Helper()
	env := []string{"PATH=" + os.Getenv("PATH")}
	return sjSpawn(t, t.TempDir(), env, []string{"sh", "-c", script}, false, converse.Config{})
}

// sjHandshake answers Start's initialize request, as Claude Code does.
const sjHandshake = `read -r line
echo '{"type":"control_response","response":{"subtype":"success","request_id":"fleetwatch-1","response":{}}}'
`

// sjEndless writes a line of 5 MiB.
const sjEndless = `head -c 5242880 /dev/zero | tr '\0' x; echo
`

func TestStreamJSONStartRefusesAHostileAgent(t *testing.T) {
	defer converse.ShortenStreamJSON(time.Second)()
	for _, c := range []struct{ name, script, want string }{
		{"junk", "echo 'Welcome to an agent that is not Claude Code'; exec sleep 30", "the agent's output is not stream-json: \"Welcome to"},
		{"endless_line", sjEndless + "exec sleep 30", "a line of the agent's output is longer than 4 MiB"},
		{"silence", "exec sleep 30", "the agent did not answer in 1s"},
		{"exit", "exit 3", "the agent's output ended|writing to the agent: write |1: broken pipe"},
		{"refusal", `read -r line; echo '{"type":"control_response","response":{"subtype":"error","request_id":"fleetwatch-1","error":"no"}}'; exec sleep 30`, "the agent refused it: no"},
	} {
		t.Run(c.name, func(t *testing.T) {
			began := time.Now()
			_, err := sjFake(t, c.script)
			if err == nil || !sjContainsOne(err.Error(), strings.Split(c.want, "|")) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Start: %v, want one line with %q", err, c.want)
			}
			if d := time.Since(began); d > 5*time.Second {
				t.Errorf("Start took %s", d)
			}
		})
	}
}

func sjContainsOne(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// sjEvents reads the conversation's events until they end, within limit.
func sjEvents(t *testing.T, a *sjAgent, limit time.Duration) []converse.Event {
	t.Helper()
	var seen []converse.Event
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		select {
		case e, ok := <-a.conv.Events():
			if !ok {
				return seen
			}
			seen = append(seen, e)
		case <-timer.C:
			t.Fatalf("the events did not end within %s: %+v", limit, seen)
		}
	}
}

// Once talking, an agent that breaks the protocol fails the conversation
// with a one-line reason: the events end, the methods say it has ended.
func TestStreamJSONFailsOnAHostileAgent(t *testing.T) {
	junk := strings.Repeat("{{{ not json\n", 100)
	for _, c := range []struct{ name, script, want string }{
		{"junk", "printf '" + junk + "'; exec sleep 30", "100 lines in a row of the agent's output are not JSON"},
		{"endless_line", sjEndless + "exec sleep 30", "a line of the agent's output is longer than 4 MiB"},
		{"exit_mid_turn", "exit 0", "the agent's output ended during a turn"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := sjFake(t, sjHandshake+"read -r line\n"+c.script)
			if err != nil {
				t.Fatal(err)
			}
			if err := a.conv.Prompt("go"); err != nil {
				t.Fatal(err)
			}
			seen := sjEvents(t, a, 10*time.Second)
			last := seen[len(seen)-1]
			if last.Kind != converse.Failed || !strings.Contains(last.Text, c.want) || strings.Contains(last.Text, "\n") {
				t.Errorf("the last event: %+v, want Failed with %q", last, c.want)
			}
			if err := a.conv.Prompt("again"); !errors.Is(err, converse.ErrClosed) {
				t.Errorf("Prompt after the failure: %v", err)
			}
		})
	}
}

// Odd fields, odd types and requests fleetwatch does not take are read
// without a panic, and the turn still ends.
func TestStreamJSONReadsOddMessages(t *testing.T) {
	a, err := sjFake(t, sjHandshake+`read -r line
echo '{"type":"system","subtype":"init","session_id":42}'
echo '{"type":"assistant","message":{"content":"not a list"}}'
echo '{"type":"assistant","message":{"content":[{"type":"tool_use","name":7,"input":[1,2]},{"type":"text"},{"type":"tool_use","name":"Edit","input":{"file_path":"a.go"}}]}}'
echo '{"type":"control_request","request_id":"x1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":"rm -rf /"}}'
echo '{"type":"control_request","request_id":"x2","request":{"subtype":"mcp_message"}}'
echo '{"type":"control_request","request":{"subtype":"can_use_tool"}}'
echo '[1,2,3]'
echo 'null'
echo '{"type":"control_response","response":{"request_id":"nobody"}}'
echo '{"type":"result","subtype":"success","usage":"lots","total_cost_usd":"free","result":{"a":1}}'
cat >answers.txt`)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.conv.Prompt("go"); err != nil {
		t.Fatal(err)
	}
	end, seen := a.until(t, converse.TurnEnded, 10*time.Second)
	if end.Stop != converse.StopDone || end.Tokens == nil || *end.Tokens != (converse.Tokens{}) {
		t.Errorf("the turn's end: %+v", end)
	}
	if !sjHas(seen, converse.Tool, "Edit: a.go") || a.conv.Session() != "" {
		t.Errorf("events %+v, session %q", seen, a.conv.Session())
	}
	if err := a.conv.Interrupt(); !errors.Is(err, converse.ErrIdle) {
		t.Errorf("Interrupt after the turn: %v", err)
	}
	if err := a.conv.Close(); err != nil {
		t.Fatal(err)
	}
	sjEvents(t, a, 5*time.Second)
	answers, _ := os.ReadFile(a.dir + "/answers.txt")
	for _, want := range []string{
		`"request_id":"x1","response":{"behavior":"allow","updatedInput":{}}`,
		`"error":"fleetwatch does not answer mcp_message requests","request_id":"x2","subtype":"error"`,
	} {
		if !strings.Contains(string(answers), want) {
			t.Errorf("the answers lack %s:\n%s", want, answers)
		}
	}
}

// An agent that reads no more input fails the write that would wait on
// it, and Close still returns at once.
func TestStreamJSONAgentThatStopsReading(t *testing.T) {
	defer converse.ShortenStreamJSON(time.Second)()
	a, err := sjFake(t, sjHandshake+"exec sleep 30")
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	err = a.conv.Prompt(strings.Repeat("a plan that does not fit in a pipe ", 1<<15))
	if err == nil || !strings.Contains(err.Error(), "the agent has not read its input for 1s") {
		t.Errorf("Prompt: %v", err)
	}
	if d := time.Since(began); d > 3*time.Second {
		t.Errorf("Prompt took %s", d)
	}
	if e, _ := a.until(t, converse.Failed, time.Second); !strings.Contains(e.Text, "has not read its input") {
		t.Errorf("the failure: %+v", e)
	}
	began = time.Now()
	a.conv.Close()
	if d := time.Since(began); d > time.Second {
		t.Errorf("Close took %s", d)
	}
}

// A note that comes as a turn ends runs as a turn of its own: it starts
// with system/init while no turn runs, and is read as one. An ask the
// agent cancels waits no more.
func TestStreamJSONTurnsTheAgentStarts(t *testing.T) {
	env := []string{"PATH=" + os.Getenv("PATH")}
	a, err := sjSpawn(t, t.TempDir(), env, []string{"sh", "-c", sjHandshake + `read -r line
echo '{"type":"system","subtype":"init","session_id":"s1"}'
echo '{"type":"assistant","message":{"content":[{"type":"text","text":"first"}]}}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"first","total_cost_usd":0.5,"usage":{"input_tokens":10,"output_tokens":2}}'
echo '{"type":"system","subtype":"init","session_id":"s1"}'
echo '{"type":"control_request","request_id":"x1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"touch late.txt"}}}'
echo '{"type":"control_cancel_request","request_id":"x1"}'
echo '{"type":"control_request","request_id":"x2","request":{"subtype":"can_use_tool","tool_name":"Write","input":{"file_path":"b.txt"}}}'
read -r answer
echo '{"type":"result","subtype":"error_max_turns","is_error":true,"total_cost_usd":0.75,"usage":{"input_tokens":5,"output_tokens":1}}'
exec cat >/dev/null`}, false, converse.Config{Asks: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.conv.Prompt("go"); err != nil {
		t.Fatal(err)
	}
	first, _ := a.until(t, converse.TurnEnded, 5*time.Second)
	if first.Turn != "1" || first.Stop != converse.StopDone || first.Tokens.USD != 0.5 || first.Tokens.Input != 10 {
		t.Errorf("the first turn's end: %+v %+v", first, first.Tokens)
	}
	started, _ := a.until(t, converse.TurnStarted, 5*time.Second)
	if started.Turn != "2" || started.Text == "" {
		t.Errorf("the agent's own turn: %+v", started)
	}
	cancelled, _ := a.until(t, converse.Asked, 5*time.Second)
	ask, _ := a.until(t, converse.Asked, 5*time.Second)
	if cancelled.Ask.ID != "x1" || ask.Ask.ID != "x2" || ask.Ask.Question != "Write: b.txt" {
		t.Errorf("the asks: %+v %+v", cancelled.Ask, ask.Ask)
	}
	if err := a.conv.Prompt("now"); !errors.Is(err, converse.ErrBusy) {
		t.Errorf("Prompt during the agent's own turn: %v", err)
	}
	if err := a.conv.Answer("x1", converse.Reply{Option: "allow"}); !errors.Is(err, converse.ErrNoAsk) {
		t.Errorf("an answer to a cancelled ask: %v", err)
	}
	if err := a.conv.Answer("x2", converse.Reply{Deny: true}); err != nil {
		t.Fatal(err)
	}
	second, _ := a.until(t, converse.TurnEnded, 5*time.Second)
	if second.Turn != "2" || second.Stop != converse.StopLimit || second.Tokens.USD != 0.25 {
		t.Errorf("the second turn's end: %+v %+v", second, second.Tokens)
	}
	if a.conv.Session() != "s1" {
		t.Errorf("session %q", a.conv.Session())
	}
}

// A driver that reads late loses nothing: the reader waits for it (and
// the agent on its stdout), in order.
func TestStreamJSONSlowDriver(t *testing.T) {
	a, err := sjFake(t, sjHandshake+`read -r line
for i in $(seq 1000); do echo '{"type":"assistant","message":{"content":[{"type":"text","text":"m'$i'"}]}}'; done
echo '{"type":"result","subtype":"success","is_error":false}'
exec cat >/dev/null`)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.conv.Prompt("go"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	_, seen := a.until(t, converse.TurnEnded, 10*time.Second)
	if len(seen) != 1003 || seen[0].Kind != converse.TurnStarted || seen[1].Text != "m1\n" || seen[1000].Text != "m1000\n" {
		t.Errorf("%d events, from %+v", len(seen), seen[:2])
	}
}
