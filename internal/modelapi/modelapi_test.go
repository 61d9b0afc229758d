package modelapi

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func start(t *testing.T, script Script) *Server {
	t.Helper()
	s, err := Start(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const (
	bashTurn  = `{"model":"m","stream":%s,"tools":[{"name":"Read"},{"name":"Bash"}],"messages":[{"role":"user","content":"go"}%s]}`
	toolReply = `,{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}`
)

func messages(stream bool, results int) string {
	s := "false"
	if stream {
		s = "true"
	}
	return strings.NewReplacer("%s", "").Replace(strings.Replace(strings.Replace(bashTurn, "%s", s, 1), "%s", strings.Repeat(toolReply, results), 1))
}

// The script's steps are served by how far the conversation has gone, so a
// client's retries and side calls do not move it on.
func TestAnthropicStepsFollowTheConversation(t *testing.T) {
	s := start(t, Script{Steps: []Step{{Shell: "echo hi", Input: 50, Output: 7}, {Text: "## Result\ndone", Input: 60, Output: 8}}})
	var first struct {
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type  string         `json:"type"`
			Name  string         `json:"name"`
			Input map[string]any `json:"input"`
		} `json:"content"`
	}
	json.NewDecoder(post(t, s.URL+"/v1/messages", messages(false, 0)).Body).Decode(&first)
	if first.StopReason != "tool_use" || first.Content[0].Name != "Bash" || first.Content[0].Input["command"] != "echo hi" {
		t.Fatalf("the first answer: %+v", first)
	}
	// A side call (no tools) does not move the script.
	io.Copy(io.Discard, post(t, s.URL+"/v1/messages", `{"model":"haiku","messages":[{"role":"user","content":"title?"}]}`).Body)
	resp := post(t, s.URL+"/v1/messages", messages(true, 1))
	var text strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		text.WriteString(sc.Text() + "\n")
	}
	if !strings.Contains(text.String(), `"text":"## Result\ndone"`) || !strings.Contains(text.String(), "event: message_stop") {
		t.Errorf("the streamed final answer:\n%s", text.String())
	}
	if u := s.Usage(); u.Input != 50+10+60 || u.Output != 7+2+8 || u.Calls != 3 {
		t.Errorf("usage %+v", u)
	}
	calls := s.Calls()
	if len(calls) != 3 || calls[0].Step != 0 || calls[1].Step != -1 || calls[2].Step != 1 || !calls[2].Stream {
		t.Errorf("calls %+v", calls)
	}
}

func TestAnthropicFaults(t *testing.T) {
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	s := start(t, Script{Steps: []Step{
		{Shell: "true", Fault: &Fault{Kind: RateLimited, RetryAfter: 7 * time.Second, Times: 1}},
		{Shell: "true", Fault: &Fault{Kind: UsageWindow, Reset: reset}},
	}})
	r := post(t, s.URL+"/v1/messages", messages(false, 0))
	if r.StatusCode != 429 || r.Header.Get("retry-after") != "7" {
		t.Errorf("rate limit: %d retry-after %q", r.StatusCode, r.Header.Get("retry-after"))
	}
	if r := post(t, s.URL+"/v1/messages", messages(false, 0)); r.StatusCode != 200 {
		t.Errorf("after its one time the step is served: %d", r.StatusCode)
	}
	for range 2 {
		r := post(t, s.URL+"/v1/messages", messages(false, 1))
		if r.StatusCode != 429 || r.Header.Get("anthropic-ratelimit-unified-reset") != strconv.FormatInt(reset.Unix(), 10) {
			t.Errorf("usage window: %d %v", r.StatusCode, r.Header)
		}
	}
	if u := s.Usage(); u.Calls != 1 {
		t.Errorf("faults report no usage: %+v", u)
	}
}

func TestDroppedStreamIsCut(t *testing.T) {
	s := start(t, Script{Steps: []Step{{Shell: "true", Fault: &Fault{Kind: Dropped}}}})
	resp := post(t, s.URL+"/v1/messages", messages(true, 0))
	b, err := io.ReadAll(resp.Body)
	if err == nil || strings.Contains(string(b), "message_stop") {
		t.Errorf("a dropped stream ended cleanly: %v\n%s", err, b)
	}
	// Served whole the next time.
	b, _ = io.ReadAll(post(t, s.URL+"/v1/messages", messages(true, 0)).Body)
	if !strings.Contains(string(b), "message_stop") {
		t.Errorf("the retry:\n%s", b)
	}
}

func TestMarkedLineTakesTheLastNote(t *testing.T) {
	body := []byte(`{"system":"RUN: never","messages":[{"role":"user","content":"do the plan"},` +
		`{"role":"assistant","content":"ok"},{"role":"user","content":[{"type":"text","text":"a note\nRUN: touch noted.txt\n"}]}]}`)
	if got := MarkedLine(body, "RUN: "); got != "touch noted.txt" {
		t.Fatalf("MarkedLine = %q, want the last note's command", got)
	}
	if got := MarkedLine([]byte(`{"messages":[]}`), "RUN: "); got != "" {
		t.Fatalf("MarkedLine of no note = %q", got)
	}
}
