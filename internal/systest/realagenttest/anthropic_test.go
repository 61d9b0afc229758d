package realagenttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// anthropic is a scripted Anthropic Messages API: asked with its Bash tool
// offered, it has the agent run command; once the tool's result comes
// back, it answers with a final text. It counts the tokens it reports.
type anthropic struct {
	*httptest.Server
	command string

	mu            sync.Mutex
	input, output int64
	calls         int
}

func newAnthropic(t *testing.T, command string) *anthropic {
	a := &anthropic{command: command}
	a.Server = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.Close)
	return a
}

func (a *anthropic) tokens() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.input + a.output
}

// request is what the script reads of a Messages request.
type request struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

func (r request) offersBash() bool {
	for _, t := range r.Tools {
		if t.Name == "Bash" {
			return true
		}
	}
	return false
}

// answered reports whether the last message carries a tool's result.
func (r request) answered() bool {
	if len(r.Messages) == 0 {
		return false
	}
	var blocks []struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(r.Messages[len(r.Messages)-1].Content, &blocks)
	for _, b := range blocks {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}

func (a *anthropic) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 8<<20))
	var r request
	_ = json.Unmarshal(body, &r)
	a.mu.Lock()
	a.calls++
	a.mu.Unlock()
	if req.Method != http.MethodPost || !r.Stream {
		w.Header().Set("content-type", "application/json")
		a.count(5, 1)
		fmt.Fprintf(w, `{"id":"msg_0","type":"message","role":"assistant","model":%q,"content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}`, r.Model)
		return
	}
	w.Header().Set("content-type", "text/event-stream")
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	const in = 100
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_1", "type": "message", "role": "assistant", "model": r.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": in, "output_tokens": 1}}})
	var out int64
	if r.offersBash() && !r.answered() {
		input, _ := json.Marshal(map[string]string{"command": a.command, "description": "commit the work"})
		event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": map[string]any{}}})
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		out = 20
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "tool_use", "stop_sequence": nil}, "usage": map[string]any{"output_tokens": out}})
	} else {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": "## Result\ncommitted hello.txt"}})
		out = 10
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": map[string]any{"output_tokens": out}})
	}
	event("message_stop", map[string]any{"type": "message_stop"})
	a.count(in, out)
}

func (a *anthropic) count(in, out int64) {
	a.mu.Lock()
	a.input += in
	a.output += out
	a.mu.Unlock()
}
