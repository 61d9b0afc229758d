package agentout

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

func init() { readers["opencode"] = readOpencode }

// opencodeEvent is one line of `opencode run --format json` (1.18): every
// event names its session; an error ends the run, with the API's status and response headers when a call failed.
type opencodeEvent struct {
	Type    string `json:"type"`
	Session string `json:"sessionID"`
	Error   *struct {
		Name string `json:"name"`
		Data struct {
			Message      string            `json:"message"`
			Status       int               `json:"statusCode"`
			Headers      map[string]string `json:"responseHeaders"`
			ResponseBody string            `json:"responseBody"`
		} `json:"data"`
	} `json:"error"`
}

// readOpencode reads one event. A run that met an API error ends with an
// "error" event, after its own retries (it waits out each retry-after, a
// usage window's too, before it gives up).
func readOpencode(r *Result, line []byte) {
	var ev opencodeEvent
	if line[0] != '{' || json.Unmarshal(line, &ev) != nil || ev.Type == "" {
		return
	}
	r.Seen = true
	if ev.Session != "" {
		r.Session = clip(ev.Session)
	}
	if ev.Type != "error" || ev.Error == nil {
		return
	}
	d := ev.Error.Data
	r.Failed, r.Status = true, max(d.Status, 0)
	r.Error = clip(strings.TrimPrefix(ev.Error.Name+": "+d.Message, ": "))
	r.Trouble = ForStatus(r.Status)
	h := lowerKeys(d.Headers)
	if s, err := strconv.Atoi(h["retry-after"]); err == nil && s > 0 {
		r.RetryAfter = time.Duration(s) * time.Second
	}
	if r.Status == 429 && spentWindow(h, d.ResponseBody) {
		r.Trouble = UsageWindow
		if end := windowEnd(h, r.RetryAfter); !end.IsZero() {
			r.Reset = end
		}
	}
}

// windowEnd is when a spent window resets: Anthropic's unified reset
// header, else retryAfter from now; zero when neither says.
func windowEnd(h map[string]string, retryAfter time.Duration) time.Time {
	if s, err := strconv.ParseInt(h["anthropic-ratelimit-unified-reset"], 10, 64); err == nil && s > 0 {
		return time.Unix(s, 0)
	}
	if retryAfter > 0 {
		return time.Now().Add(retryAfter)
	}
	return time.Time{}
}

// spentWindow reports whether a 429's headers or body say a usage window or
// quota is spent rather than a rate exceeded: Anthropic's unified limit
// rejected, or OpenAI's insufficient_quota.
func spentWindow(h map[string]string, body string) bool {
	return h["anthropic-ratelimit-unified-status"] == "rejected" || strings.Contains(body, "insufficient_quota")
}

// lowerKeys is h with its names in lower case, as HTTP's are compared.
func lowerKeys(h map[string]string) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[strings.ToLower(k)] = v
	}
	return out
}
