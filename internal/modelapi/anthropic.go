package modelapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// anthropicAPI is Anthropic's Messages API (/v1/messages), as Claude Code
// and opencode's anthropic provider call it.
type anthropicAPI struct{}

func (anthropicAPI) name() string { return "anthropic" }

func (anthropicAPI) match(r *http.Request) bool {
	return strings.HasSuffix(r.URL.Path, "/messages") || strings.HasSuffix(r.URL.Path, "/messages/count_tokens")
}

type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role string `json:"role"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

func (anthropicAPI) read(r *http.Request, body []byte) (Request, error) {
	var m anthropicRequest
	if err := json.Unmarshal(body, &m); err != nil {
		return Request{}, fmt.Errorf("a Messages request that is not JSON: %v", err)
	}
	req := Request{Model: m.Model, Stream: m.Stream}
	if strings.HasSuffix(r.URL.Path, "/count_tokens") {
		return req, nil
	}
	names := make([]string, len(m.Tools))
	for i, t := range m.Tools {
		names[i] = t.Name
	}
	req.Tool = ShellTool(names)
	for _, msg := range m.Messages {
		if msg.Role == "assistant" {
			req.Results++
		}
	}
	return req, nil
}

func (anthropicAPI) answer(w http.ResponseWriter, a Answer) {
	id := fmt.Sprintf("msg_%d", a.Seq)
	usage := map[string]any{"input_tokens": a.Input, "output_tokens": a.Output}
	stop := "end_turn"
	var block map[string]any
	if a.Tool != "" {
		stop = "tool_use"
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", a.Seq), "name": a.Tool, "input": a.Args}
	} else {
		block = map[string]any{"type": "text", "text": a.Text}
	}
	if !a.Stream {
		writeJSON(w, http.StatusOK, map[string]any{"id": id, "type": "message", "role": "assistant", "model": a.Model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	e := newEvents(w, a, 6)
	// The whole answer's output from the first event: a client that
	// cuts the stream once it has what it wants (a title) was still sent
	// the figure the server counts, so a meter reading the stream agrees.
	e.send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": a.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": a.Input, "output_tokens": a.Output}}})
	if a.Tool != "" {
		args, _ := json.Marshal(a.Args)
		e.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": a.Tool, "input": map[string]any{}}})
		e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}})
	} else {
		e.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": a.Text}})
	}
	e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	e.send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": a.Output}})
	e.send("message_stop", map[string]any{"type": "message_stop"})
}

func (anthropicAPI) fault(w http.ResponseWriter, f Fault) {
	status, kind, msg := http.StatusTooManyRequests, "rate_limit_error", "This request would exceed your rate limit."
	switch f.Kind {
	case RateLimited:
		retryAfter(w, f.RetryAfter)
	case UsageWindow:
		// What a subscription's spent window answers: the unified
		// limit's headers say which window and when it opens again.
		reset := fmt.Sprint(f.Reset.Unix())
		w.Header().Set("anthropic-ratelimit-unified-status", "rejected")
		w.Header().Set("anthropic-ratelimit-unified-reset", reset)
		w.Header().Set("anthropic-ratelimit-unified-5h-status", "rejected")
		w.Header().Set("anthropic-ratelimit-unified-5h-reset", reset)
		w.Header().Set("anthropic-ratelimit-unified-representative-claim", "five_hour")
		retryAfter(w, time.Until(f.Reset))
		msg = "You have reached your usage limit. Your limit will reset at " + f.Reset.UTC().Format(time.RFC3339) + "."
	case Overloaded:
		status, kind, msg = 529, "overloaded_error", "Overloaded"
		retryAfter(w, f.RetryAfter)
	case AuthFailed:
		status, kind, msg = http.StatusUnauthorized, "authentication_error", "invalid x-api-key"
	}
	w.Header().Set("request-id", "req_scripted")
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": kind, "message": msg}})
}
