package agentout

import (
	"encoding/json"
	"strings"
)

func init() { readers["qwen"] = readQwen }

// qwenEvent is one event of qwen-code's stream-json output (0.24): each
// names its session; the last, its result, says whether the turn failed
// and why. Its API errors are texts only: "[API Error: 401 …]".
type qwenEvent struct {
	Type    string `json:"type"`
	Session string `json:"session_id"`
	IsError bool   `json:"is_error"`
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// readQwen reads a stream-json line, or the one line of `--output-format
// json`: an array of the same events.
func readQwen(r *Result, line []byte) {
	var evs []qwenEvent
	switch line[0] {
	case '{':
		var ev qwenEvent
		if json.Unmarshal(line, &ev) != nil {
			return
		}
		evs = []qwenEvent{ev}
	case '[':
		if json.Unmarshal(line, &evs) != nil {
			return
		}
	}
	for _, ev := range evs {
		qwenResult(r, ev)
	}
}

func qwenResult(r *Result, ev qwenEvent) {
	if ev.Type == "" {
		return
	}
	r.Seen = true
	if ev.Session != "" {
		r.Session = clip(ev.Session)
	}
	if ev.Type != "result" || !ev.IsError {
		return
	}
	r.Failed = true
	if ev.Error == nil {
		return
	}
	msg := ev.Error.Message
	r.Error = clip(msg)
	if r.Status = statusIn(msg); r.Status != 0 {
		r.Trouble = ForStatus(r.Status)
	}
	if r.Status == 429 && (strings.Contains(msg, "quota") || strings.Contains(msg, "usage limit")) {
		r.Trouble = UsageWindow
	}
}
