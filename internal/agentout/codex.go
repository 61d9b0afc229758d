package agentout

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Codex 0.169's `codex exec --json` prints one event a line:
// thread.started (its thread_id is the session `codex exec resume`
// takes), turn.started, item.started/item.completed, then turn.completed
// with the turn's usage or turn.failed with the error it ended on. An
// error event before turn.failed says the same; one saying
// "Reconnecting... n/5 (…)" is a retry under way, not an end. Codex
// names a refused call by its text only: "exceeded retry limit, last
// status: 429 Too Many Requests" (a rate limit, after its own retries),
// "unexpected status 401 Unauthorized: …", "Selected model is at
// capacity" (503), "You’ve hit your usage limit. … try again at 2:28 AM."
// (ChatGPT's usage_limit_reached: the reset in local time, with "Dec 6th,
// 2026 " before it when not today).
func init() { readers["codex"] = readCodex }

// codexEvent is the fields of a Codex event read here.
type codexEvent struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func readCodex(r *Result, line []byte) {
	if line[0] != '{' {
		return
	}
	var ev codexEvent
	if json.Unmarshal(line, &ev) != nil {
		return
	}
	switch ev.Type {
	case "thread.started":
		r.Seen, r.Session = true, clip(ev.ThreadID)
	case "turn.completed":
		*r = Result{Seen: true, Session: r.Session}
	case "turn.failed", "error":
		msg := ev.Message
		if ev.Error != nil {
			msg = ev.Error.Message
		}
		if strings.HasPrefix(msg, "Reconnecting...") {
			return
		}
		*r = Result{Seen: true, Failed: true, Session: r.Session, Error: clip(strings.TrimSpace(msg))}
		codexTrouble(r, msg)
	}
}

// codexTrouble reads the endpoint trouble a Codex error text names.
func codexTrouble(r *Result, msg string) {
	low := strings.ToLower(msg)
	if m := codexStatus().FindStringSubmatch(msg); m != nil {
		r.Status, _ = strconv.Atoi(m[1])
		r.Trouble = ForStatus(r.Status)
	}
	switch {
	case strings.Contains(low, "hit your usage limit"):
		r.Trouble, r.Reset = UsageWindow, codexReset(msg, time.Now())
	case strings.Contains(low, "rate limit"):
		r.Trouble = RateLimited
	case strings.Contains(low, "at capacity"), strings.Contains(low, "high demand"), strings.Contains(low, "overloaded"):
		r.Trouble = Overloaded
	case strings.HasPrefix(low, "quota exceeded"), strings.HasPrefix(low, "missing environment variable"):
		// No credit left on the key, or no key: only the operator mends it.
		r.Trouble = AuthFailed
	}
	if m := codexRetryIn().FindStringSubmatch(msg); m != nil && r.Trouble == RateLimited {
		n, _ := strconv.ParseFloat(m[1], 64)
		unit := time.Second
		if strings.EqualFold(m[2], "ms") {
			unit = time.Millisecond
		}
		r.RetryAfter = time.Duration(min(n, 86400) * float64(unit))
	}
}

var (
	// codexStatus is the HTTP status a Codex error names.
	codexStatus = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\bstatus:? ([1-5][0-9][0-9])\b`) })
	// codexRetryIn is the API's "try again in 7s" that Codex passes on.
	codexRetryIn = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)try again in\s*(\d{1,6}(?:\.\d{1,3})?)\s*(ms|s|seconds?)\b`)
	})
	// codexResetAt is the local time a usage limit resets at.
	codexResetAt = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)try again at (?:([A-Z][a-z]{2}) (\d{1,2})(?:st|nd|rd|th), (\d{4}) )?(\d{1,2}:\d\d [AP]M)`)
	})
)

// codexReset is the reset a usage-limit text gives, zero when it gives
// none. Codex prints it in local time to the minute, the date only when
// not today; the minute it names is over before the window opens.
func codexReset(msg string, now time.Time) time.Time {
	m := codexResetAt().FindStringSubmatch(msg)
	if m == nil {
		return time.Time{}
	}
	clock, err := time.ParseInLocation("3:04 PM", m[4], time.Local)
	if err != nil {
		return time.Time{}
	}
	now = now.In(time.Local)
	y, mo, d := now.Date()
	if m[1] != "" {
		day, err := time.ParseInLocation("Jan 2 2006", m[1]+" "+m[2]+" "+m[3], time.Local)
		if err != nil {
			return time.Time{}
		}
		y, mo, d = day.Date()
	}
	return time.Date(y, mo, d, clock.Hour(), clock.Minute()+1, 0, 0, time.Local)
}
