package modelapi

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// chatTurn is a Chat Completions call offering qwen-code's shell tool,
// after results tool results.
func chatTurn(stream bool, results int) string {
	msgs := `{"role":"system","content":"be brief"},{"role":"user","content":"go"}`
	for i := range results {
		msgs += fmt.Sprintf(`,{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function","function":{"name":"run_shell_command","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c%d","content":"ok"}`, i, i)
	}
	return fmt.Sprintf(`{"model":"qwen3-coder","stream":%v,"stream_options":{"include_usage":true},"tools":[{"type":"function","function":{"name":"read_file"}},{"type":"function","function":{"name":"run_shell_command"}}],"messages":[%s]}`, stream, msgs)
}

func TestChatStepsFollowTheConversation(t *testing.T) {
	s := start(t, Script{Steps: []Step{{Shell: "echo hi", Input: 50, Output: 7}, {Text: "## Result\ndone", Input: 60, Output: 8}}})
	var first struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				ToolCalls []struct {
					Function struct{ Name, Arguments string } `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			Prompt     int64 `json:"prompt_tokens"`
			Completion int64 `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(post(t, s.URL+"/v1/chat/completions", chatTurn(false, 0)).Body).Decode(&first); err != nil {
		t.Fatal(err)
	}
	var args map[string]any
	if len(first.Choices) != 1 || first.Choices[0].FinishReason != "tool_calls" || len(first.Choices[0].Message.ToolCalls) != 1 {
		t.Fatalf("the first answer: %+v", first)
	}
	call := first.Choices[0].Message.ToolCalls[0].Function
	if json.Unmarshal([]byte(call.Arguments), &args); call.Name != "run_shell_command" || args["command"] != "echo hi" {
		t.Errorf("the tool call: %+v", call)
	}
	if first.Usage.Prompt != 50 || first.Usage.Completion != 7 {
		t.Errorf("usage: %+v", first.Usage)
	}
	// A call with no shell tool (a title, a summary) does not move the script.
	post(t, s.URL+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"title?"}]}`)
	resp := post(t, s.URL+"/chat/completions", chatTurn(true, 1))
	var chunks []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			chunks = append(chunks, d)
		}
	}
	all := strings.Join(chunks, "\n")
	if resp.Header.Get("content-type") != "text/event-stream" || !strings.Contains(all, `"content":"## Result\ndone"`) ||
		!strings.Contains(all, `"finish_reason":"stop"`) || len(chunks) < 2 || chunks[len(chunks)-1] != "[DONE]" ||
		!strings.Contains(chunks[len(chunks)-2], `"choices":[],`) || !strings.Contains(chunks[len(chunks)-2], `"prompt_tokens":60`) {
		t.Errorf("the streamed final answer:\n%s", all)
	}
	if u := s.Usage(); u.Input != 50+10+60 || u.Output != 7+2+8 || u.Calls != 3 {
		t.Errorf("usage %+v", u)
	}
	if c := s.Calls(); len(c) != 3 || c[0].API != "chat" || c[0].Tool != "run_shell_command" || c[1].Step != -1 || c[2].Step != 1 {
		t.Errorf("calls %+v", c)
	}
}

// A streamed tool call comes as OpenAI's deltas: the call's id and name,
// then its arguments.
func TestChatStreamedToolCall(t *testing.T) {
	s := start(t, Script{Steps: []Step{{Shell: "git commit -qm x"}}})
	resp := post(t, s.URL+"/v1/chat/completions", chatTurn(true, 0))
	var name, args, finish string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var c struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						Function struct{ Name, Arguments string } `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		d, _ := strings.CutPrefix(sc.Text(), "data: ")
		if json.Unmarshal([]byte(d), &c) != nil {
			continue
		}
		for _, ch := range c.Choices {
			for _, tc := range ch.Delta.ToolCalls {
				name += tc.Function.Name
				args += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	if name != "run_shell_command" || !strings.Contains(args, `"command":"git commit -qm x"`) || finish != "tool_calls" {
		t.Errorf("name %q args %q finish %q", name, args, finish)
	}
}

func TestChatFaults(t *testing.T) {
	reset := time.Now().Add(time.Hour)
	s := start(t, Script{Steps: []Step{
		{Shell: "true", Fault: &Fault{Kind: RateLimited, RetryAfter: 7 * time.Second, Times: 1}},
		{Shell: "true", Fault: &Fault{Kind: AuthFailed, Times: 1}},
		{Shell: "true", Fault: &Fault{Kind: UsageWindow, Reset: reset}},
	}})
	for _, c := range []struct {
		results, status int
		code, header    string
	}{
		{0, 429, "rate_limit_exceeded", "7"},
		{1, 401, "invalid_api_key", ""},
		{2, 429, "insufficient_quota", "3600"},
	} {
		r := post(t, s.URL+"/v1/chat/completions", chatTurn(false, c.results))
		var body struct {
			Error struct{ Message, Type, Code string } `json:"error"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		if r.StatusCode != c.status || body.Error.Code != c.code || body.Error.Message == "" || r.Header.Get("retry-after") != c.header {
			t.Errorf("step %d: %d %+v retry-after %q", c.results, r.StatusCode, body, r.Header.Get("retry-after"))
		}
	}
	if u := s.Usage(); u.Calls != 0 {
		t.Errorf("faults report no usage: %+v", u)
	}
}
