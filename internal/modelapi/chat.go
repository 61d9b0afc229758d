package modelapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// chatAPI is OpenAI's Chat Completions API (/v1/chat/completions, or
// /chat/completions under a base URL that holds the version), as qwen-code
// and opencode's OpenAI-compatible providers call it.
type chatAPI struct{}

func (chatAPI) name() string { return "chat" }

func (chatAPI) match(r *http.Request) bool {
	return strings.HasSuffix(r.URL.Path, "/chat/completions")
}

type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role string `json:"role"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

func (chatAPI) read(r *http.Request, body []byte) (Request, error) {
	var m chatRequest
	if err := json.Unmarshal(body, &m); err != nil {
		return Request{}, fmt.Errorf("a Chat Completions request that is not JSON: %v", err)
	}
	names := make([]string, len(m.Tools))
	for i, t := range m.Tools {
		names[i] = t.Function.Name
	}
	req := Request{Model: m.Model, Stream: m.Stream, Tool: ShellTool(names)}
	for _, msg := range m.Messages {
		if msg.Role == "assistant" {
			req.Results++
		}
	}
	return req, nil
}

func (chatAPI) answer(w http.ResponseWriter, a Answer) {
	id, created := fmt.Sprintf("chatcmpl-%d", a.Seq), time.Now().Unix()
	usage := map[string]any{"prompt_tokens": a.Input, "completion_tokens": a.Output, "total_tokens": a.Input + a.Output}
	finish, msg := "stop", map[string]any{"role": "assistant", "content": a.Text}
	var call map[string]any
	if a.Tool != "" {
		args, _ := json.Marshal(a.Args)
		finish = "tool_calls"
		call = map[string]any{"id": fmt.Sprintf("call_%d", a.Seq), "type": "function",
			"function": map[string]any{"name": a.Tool, "arguments": string(args)}}
		msg["content"], msg["tool_calls"] = nil, []any{call}
	}
	if !a.Stream {
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "object": "chat.completion", "created": created, "model": a.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": a.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	e := newEvents(w, a, 5)
	e.send("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if call != nil {
		fn := call["function"].(map[string]any)
		e.send("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": call["id"], "type": "function",
			"function": map[string]any{"name": a.Tool, "arguments": ""}}}}, nil))
		e.send("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0,
			"function": map[string]any{"arguments": fn["arguments"]}}}}, nil))
	} else {
		e.send("", chunk(map[string]any{"content": a.Text}, nil))
	}
	e.send("", chunk(map[string]any{}, finish))
	// The usage chunk OpenAI sends when stream_options.include_usage asks
	// for it, sent always so that what the server counts is what it sent
	// (the metering proxy asks for it on every stream anyway).
	e.send("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": a.Model,
		"choices": []any{}, "usage": usage})
	e.raw("[DONE]")
}

func (chatAPI) fault(w http.ResponseWriter, f Fault) {
	status, kind, code, msg := http.StatusTooManyRequests, "requests", "rate_limit_exceeded", "Rate limit reached for requests. Please try again later."
	switch f.Kind {
	case RateLimited:
		retryAfter(w, f.RetryAfter)
		w.Header().Set("x-ratelimit-remaining-requests", "0")
		w.Header().Set("x-ratelimit-reset-requests", fmt.Sprintf("%ds", int(f.RetryAfter/time.Second)))
	case UsageWindow:
		// What a spent quota answers; the reset is told by retry-after
		// and the rate-limit headers, as OpenAI-compatible gateways do.
		wait := time.Until(f.Reset)
		retryAfter(w, wait)
		w.Header().Set("x-ratelimit-remaining-tokens", "0")
		w.Header().Set("x-ratelimit-reset-tokens", fmt.Sprintf("%ds", int(wait/time.Second)))
		kind, code = "insufficient_quota", "insufficient_quota"
		msg = "You exceeded your current quota. Your limit will reset at " + f.Reset.UTC().Format(time.RFC3339) + "."
	case Overloaded:
		status, kind, code, msg = http.StatusServiceUnavailable, "server_error", "server_overloaded", "The server is overloaded or not ready yet."
		retryAfter(w, f.RetryAfter)
	case AuthFailed:
		status, kind, code, msg = http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", "Incorrect API key provided."
	}
	w.Header().Set("x-request-id", "req_scripted")
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": kind, "param": nil, "code": code}})
}
