package modelapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// responsesAPI is OpenAI's Responses API (POST {base}/responses), as Codex
// calls it through a model_providers entry with wire_api "responses": it
// always streams, offers its shell as a function tool, and sends the
// conversation so far as input items (the model's messages and function
// calls among them, each call followed by its function_call_output).
type responsesAPI struct{}

func (responsesAPI) name() string { return "responses" }

func (responsesAPI) match(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses")
}

type responsesRequest struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	Input  []struct {
		Type string `json:"type"`
		Role string `json:"role"`
	} `json:"input"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

func (responsesAPI) read(_ *http.Request, body []byte) (Request, error) {
	var m responsesRequest
	if err := json.Unmarshal(body, &m); err != nil {
		return Request{}, fmt.Errorf("a Responses request that is not JSON: %v", err)
	}
	req := Request{Model: m.Model, Stream: m.Stream}
	names := make([]string, len(m.Tools))
	for i, t := range m.Tools {
		names[i] = t.Name
	}
	req.Tool = ShellTool(names)
	for _, in := range m.Input {
		switch {
		case in.Type == "message" && in.Role == "assistant", in.Type == "function_call", in.Type == "custom_tool_call", in.Type == "local_shell_call":
			req.Results++
		}
	}
	return req, nil
}

// responseItem is the answer's one output item: a function call of the
// shell tool or an assistant message.
func responseItem(a Answer) map[string]any {
	if a.Tool != "" {
		args, _ := json.Marshal(a.Args)
		return map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", a.Seq), "call_id": fmt.Sprintf("call_%d", a.Seq),
			"name": a.Tool, "arguments": string(args), "status": "completed"}
	}
	return map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d", a.Seq), "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": a.Text, "annotations": []any{}}}}
}

func (responsesAPI) answer(w http.ResponseWriter, a Answer) {
	item := responseItem(a)
	resp := map[string]any{"id": fmt.Sprintf("resp_%d", a.Seq), "object": "response", "created_at": time.Now().Unix(),
		"model": a.Model, "status": "completed", "output": []any{item},
		"usage": map[string]any{"input_tokens": a.Input, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": a.Output, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": a.Input + a.Output}}
	if !a.Stream {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	e := newEvents(w, a, 5)
	created := map[string]any{"id": resp["id"], "object": "response", "created_at": resp["created_at"], "model": a.Model, "status": "in_progress", "output": []any{}}
	e.send("response.created", map[string]any{"type": "response.created", "sequence_number": 0, "response": created})
	e.send("response.output_item.added", map[string]any{"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": item})
	if a.Tool == "" {
		e.send("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "sequence_number": 2,
			"item_id": item["id"], "output_index": 0, "content_index": 0, "delta": a.Text})
	} else {
		e.send("response.function_call_arguments.done", map[string]any{"type": "response.function_call_arguments.done", "sequence_number": 2,
			"item_id": item["id"], "output_index": 0, "arguments": item["arguments"]})
	}
	e.send("response.output_item.done", map[string]any{"type": "response.output_item.done", "sequence_number": 3, "output_index": 0, "item": item})
	e.send("response.completed", map[string]any{"type": "response.completed", "sequence_number": 4, "response": resp})
}

// fault answers in OpenAI's error shape; a spent usage window answers as
// ChatGPT's Codex backend does (error type usage_limit_reached with
// resets_at, and its x-codex-primary-* window headers), which Codex
// reads into "You've hit your usage limit" with the reset time.
func (responsesAPI) fault(w http.ResponseWriter, f Fault) {
	status := http.StatusTooManyRequests
	body := map[string]any{"message": "Rate limit reached for requests. Please try again in " + seconds(f.RetryAfter) + ".",
		"type": "requests", "param": nil, "code": "rate_limit_exceeded"}
	switch f.Kind {
	case RateLimited:
		retryAfter(w, f.RetryAfter)
	case UsageWindow:
		left := max(int64(time.Until(f.Reset)/time.Second), 0)
		w.Header().Set("x-codex-primary-used-percent", "100")
		w.Header().Set("x-codex-primary-window-minutes", "300")
		w.Header().Set("x-codex-primary-reset-at", fmt.Sprint(f.Reset.Unix()))
		w.Header().Set("x-codex-primary-reset-after-seconds", fmt.Sprint(left))
		retryAfter(w, time.Until(f.Reset))
		body = map[string]any{"type": "usage_limit_reached", "message": "The usage limit has been reached",
			"plan_type": "plus", "resets_at": f.Reset.Unix(), "resets_in_seconds": left}
	case Overloaded:
		status = http.StatusServiceUnavailable
		body = map[string]any{"message": "Our servers are currently overloaded. Please try again later.",
			"type": "server_error", "param": nil, "code": "server_is_overloaded"}
		retryAfter(w, f.RetryAfter)
	case AuthFailed:
		status = http.StatusUnauthorized
		body = map[string]any{"message": "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.",
			"type": "invalid_request_error", "param": nil, "code": "invalid_api_key"}
	}
	w.Header().Set("x-request-id", "req_scripted")
	writeJSON(w, status, map[string]any{"error": body})
}

// seconds is d as OpenAI's messages say it ("7s"), at least 1s.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%ds", max(int((d+time.Second-1)/time.Second), 1))
}
