package modelapi

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// geminiTurn is a generateContent request offering run_shell_command,
// after results tool results.
func geminiTurn(results int) string {
	contents := []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "go"}}}}
	for range results {
		contents = append(contents,
			map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": map[string]any{"name": "run_shell_command", "args": map[string]any{}}}}},
			map[string]any{"role": "user", "parts": []any{map[string]any{"functionResponse": map[string]any{"name": "run_shell_command", "response": map[string]any{"output": "ok"}}}}})
	}
	b, _ := json.Marshal(map[string]any{"contents": contents, "tools": []any{map[string]any{"functionDeclarations": []any{
		map[string]any{"name": "read_file"}, map[string]any{"name": "run_shell_command"}}}}})
	return string(b)
}

func TestGeminiStepsFollowTheConversation(t *testing.T) {
	s := start(t, Script{Steps: []Step{{Shell: "echo hi", Input: 50, Output: 7}, {Text: "## Result\ndone", Input: 60, Output: 8}}})
	var first struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					FunctionCall struct {
						Name string         `json:"name"`
						Args map[string]any `json:"args"`
					} `json:"functionCall"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
		UsageMetadata map[string]int64 `json:"usageMetadata"`
	}
	json.NewDecoder(post(t, s.URL+"/v1beta/models/gemini-2.5-pro:generateContent", geminiTurn(0)).Body).Decode(&first)
	if len(first.Candidates) != 1 || first.Candidates[0].Content.Parts[0].FunctionCall.Name != "run_shell_command" ||
		first.Candidates[0].Content.Parts[0].FunctionCall.Args["command"] != "echo hi" || first.UsageMetadata["totalTokenCount"] != 57 {
		t.Fatalf("the first answer: %+v", first)
	}
	// A side call (no shell tool) does not move the script.
	io.Copy(io.Discard, post(t, s.URL+"/v1beta/models/gemini-2.5-flash:generateContent", `{"contents":[{"role":"user","parts":[{"text":"route?"}]}]}`).Body)
	b, _ := io.ReadAll(post(t, s.URL+"/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", geminiTurn(1)).Body)
	if !strings.Contains(string(b), `"text":"## Result\ndone"`) || !strings.Contains(string(b), `"candidatesTokenCount":8`) || strings.Count(string(b), "data: ") != 2 {
		t.Errorf("the streamed final answer:\n%s", b)
	}
	if u := s.Usage(); u.Input != 50+10+60 || u.Output != 7+2+8 {
		t.Errorf("usage %+v", u)
	}
	calls := s.Calls()
	if len(calls) != 3 || calls[0].Model != "gemini-2.5-pro" || calls[1].Step != -1 || calls[2].Step != 1 || !calls[2].Stream || calls[2].API != "gemini" {
		t.Errorf("calls %+v", calls)
	}
}

// Faults answer in Google's error shape, with the details Gemini CLI reads.
func TestGeminiFaults(t *testing.T) {
	s := start(t, Script{Steps: []Step{
		{Shell: "true", Fault: &Fault{Kind: RateLimited, RetryAfter: 30 * time.Second, Times: 1}},
		{Shell: "true", Fault: &Fault{Kind: UsageWindow, Reset: time.Now().Add(time.Hour)}},
		{Shell: "true", Fault: &Fault{Kind: AuthFailed}},
	}})
	url := s.URL + "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
	var rate struct {
		Error struct {
			Code    int
			Status  string
			Details []map[string]any
		}
	}
	r := post(t, url, geminiTurn(0))
	json.NewDecoder(r.Body).Decode(&rate)
	if r.StatusCode != 429 || rate.Error.Code != 429 || rate.Error.Status != "RESOURCE_EXHAUSTED" || len(rate.Error.Details) != 1 || rate.Error.Details[0]["retryDelay"] != "30s" {
		t.Errorf("rate limit: %d %+v", r.StatusCode, rate)
	}
	b, _ := io.ReadAll(post(t, url, geminiTurn(1)).Body)
	if !strings.Contains(string(b), "PerDay") || !strings.Contains(string(b), `"retryDelay":"3600s"`) {
		t.Errorf("usage window: %s", b)
	}
	if r := post(t, url, geminiTurn(2)); r.StatusCode != 401 {
		t.Errorf("auth: %d", r.StatusCode)
	}
	if u := s.Usage(); u.Calls != 0 {
		t.Errorf("faults report no usage: %+v", u)
	}
}
