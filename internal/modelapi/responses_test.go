package modelapi

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

// responsesTurn is a Codex call: its tools, and the conversation so far
// with answers function calls of the model's.
func responsesTurn(answers int) string {
	input := `{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}`
	for i := range answers {
		id := strconv.Itoa(i)
		input += `,{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"c` + id + `"}` +
			`,{"type":"function_call_output","call_id":"c` + id + `","output":"ok"}`
	}
	return `{"model":"gpt-5-codex","stream":true,"tools":[{"type":"function","name":"exec_command"},{"type":"namespace","name":"multi_agent_v1","tools":[]}],"input":[` + input + `]}`
}

func TestResponsesStreamsCodexSteps(t *testing.T) {
	s := start(t, Script{Steps: []Step{{Shell: "echo hi", Input: 50, Output: 7}, {Text: "## Result\ndone", Input: 60, Output: 8}}})
	b, _ := io.ReadAll(post(t, s.URL+"/v1/responses", responsesTurn(0)).Body)
	var done struct {
		Item struct {
			Type, Name, Arguments string
		} `json:"item"`
	}
	for _, ev := range strings.Split(string(b), "\n\n") {
		if data, ok := strings.CutPrefix(ev, "event: response.output_item.done\ndata: "); ok {
			json.Unmarshal([]byte(data), &done)
		}
	}
	if done.Item.Type != "function_call" || done.Item.Name != "exec_command" || done.Item.Arguments != `{"cmd":"echo hi"}` {
		t.Fatalf("the first answer: %+v\n%s", done, b)
	}
	for _, want := range []string{"event: response.created", "event: response.output_item.added", "event: response.completed",
		`"usage":{"input_tokens":50,"input_tokens_details":{"cached_tokens":0},"output_tokens":7,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":57}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the stream lacks %s:\n%s", want, b)
		}
	}
	b, _ = io.ReadAll(post(t, s.URL+"/v1/responses", responsesTurn(1)).Body)
	if !strings.Contains(string(b), `"text":"## Result\ndone","type":"output_text"`) {
		t.Errorf("the final answer:\n%s", b)
	}
	if u := s.Usage(); u.Input != 110 || u.Output != 15 || u.Calls != 2 {
		t.Errorf("usage %+v", u)
	}
	if c := s.Calls(); len(c) != 2 || c[0].API != "responses" || c[1].Step != 1 || c[1].Tool != "exec_command" {
		t.Errorf("calls %+v", c)
	}
}

func TestResponsesFaults(t *testing.T) {
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	s := start(t, Script{Steps: []Step{
		{Shell: "true", Fault: &Fault{Kind: RateLimited, RetryAfter: 7 * time.Second, Times: 1}},
		{Shell: "true", Fault: &Fault{Kind: AuthFailed, Times: 1}},
		{Shell: "true", Fault: &Fault{Kind: UsageWindow, Reset: reset}},
	}})
	var body struct {
		Error struct {
			Type, Code, Message string
			ResetsAt            int64 `json:"resets_at"`
		} `json:"error"`
	}
	r := post(t, s.URL+"/v1/responses", responsesTurn(0))
	json.NewDecoder(r.Body).Decode(&body)
	if r.StatusCode != 429 || r.Header.Get("retry-after") != "7" || body.Error.Code != "rate_limit_exceeded" || !strings.Contains(body.Error.Message, "try again in 7s") {
		t.Errorf("rate limit: %d %v %+v", r.StatusCode, r.Header, body)
	}
	io.Copy(io.Discard, post(t, s.URL+"/v1/responses", responsesTurn(0)).Body)
	r = post(t, s.URL+"/v1/responses", responsesTurn(1))
	json.NewDecoder(r.Body).Decode(&body)
	if r.StatusCode != 401 || body.Error.Code != "invalid_api_key" {
		t.Errorf("auth: %d %+v", r.StatusCode, body)
	}
	io.Copy(io.Discard, post(t, s.URL+"/v1/responses", responsesTurn(1)).Body)
	r = post(t, s.URL+"/v1/responses", responsesTurn(2))
	json.NewDecoder(r.Body).Decode(&body)
	if r.StatusCode != 429 || body.Error.Type != "usage_limit_reached" || body.Error.ResetsAt != reset.Unix() ||
		r.Header.Get("x-codex-primary-reset-at") != strconv.FormatInt(reset.Unix(), 10) {
		t.Errorf("usage window: %d %v %+v", r.StatusCode, r.Header, body)
	}
}
