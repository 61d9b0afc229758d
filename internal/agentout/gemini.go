package agentout

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

func init() { readers["gemini"] = readGemini }

// geminiLine is one event of Gemini CLI's `--output-format stream-json`
// (0.61.0): "init" carries the session id; "result" ends the run, with
// status "success" or "error" and the error's message.
type geminiLine struct {
	Type      string `json:"type"`
	SessionID string `json:"session_id"`
	Status    string `json:"status"`
	Severity  string `json:"severity"` // an "error" event's: warning or error
	Message   string `json:"message"`
	Error     *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// readGemini reads Gemini CLI's stream-json events. Its result names no
// API status: the message says it. An error the CLI did not classify is
// the API's own body, "[API Error: {"error":{"code":401,...}}]"; a quota
// error (429) it classified is its message with the CLI's rate-limit hint
// after it, and a retry delay as "Suggested retry after 30s." or "Please
// retry in 30s."; a spent daily quota (a usage window) says "You have
// exhausted your daily quota".
func readGemini(r *Result, line []byte) {
	var ev geminiLine
	if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
		return
	}
	switch ev.Type {
	case "init":
		if ev.SessionID != "" {
			r.Session = clip(ev.SessionID)
		}
	case "error":
		if ev.Severity == "error" && r.Error == "" {
			r.Error = clip(ev.Message)
		}
	case "result":
		r.Seen = true
		r.Failed = ev.Status != "success"
		if ev.Error != nil {
			r.Error = clip(strings.Join(strings.Fields(ev.Error.Message), " "))
			geminiTrouble(r, ev.Error.Message)
		}
	}
}

// geminiHints are the texts Gemini CLI adds after a 429's message, by
// login (API key, Vertex AI: "Please wait and try again later"; Google
// login: "Possible quota limitations").
var geminiHints = []string{"Please wait and try again later.", "Possible quota limitations in place"}

// geminiRetry is a retry delay as Gemini CLI or the API writes it.
var geminiRetry = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:Suggested retry after|Please retry in) ([0-9.]+)(ms|s)\b`)
})

// geminiTrouble reads the endpoint trouble a result's error message says.
func geminiTrouble(r *Result, msg string) {
	if i := strings.Index(msg, "[API Error: {"); i >= 0 && geminiStatus(r, msg[i+len("[API Error: "):]) {
		return
	}
	for _, h := range geminiHints {
		if strings.Contains(msg, h) {
			r.Status, r.Trouble = 429, RateLimited
		}
	}
	switch {
	case strings.Contains(msg, "exhausted your daily quota"):
		r.Status, r.Trouble = 429, UsageWindow
	case r.Trouble == NoTrouble && strings.HasPrefix(msg, "[API Error: The model is overloaded"):
		r.Status, r.Trouble = 503, Overloaded
	}
	if m := geminiRetry().FindStringSubmatch(msg); m != nil && r.Trouble != NoTrouble {
		r.RetryAfter = geminiDelay(m[1], m[2])
	}
}

// googleStatus is an error status as Google's APIs name it.
var googleStatus = map[string]int{"RESOURCE_EXHAUSTED": 429, "UNAUTHENTICATED": 401, "PERMISSION_DENIED": 403, "UNAVAILABLE": 503}

// geminiStatus reads an API error body ({"error":{"code":…}}) at the
// start of s, and whether there was one.
func geminiStatus(r *Result, s string) bool {
	var body struct {
		Error struct {
			Code    int    `json:"code"`
			Status  string `json:"status"`
			Details []struct {
				Type       string `json:"@type"`
				RetryDelay string `json:"retryDelay"`
				Violations []struct {
					QuotaID string `json:"quotaId"`
				} `json:"violations"`
			} `json:"details"`
		} `json:"error"`
	}
	if json.NewDecoder(strings.NewReader(s)).Decode(&body) != nil {
		return false
	}
	e := body.Error
	if e.Code == 0 {
		e.Code = googleStatus[e.Status]
	}
	if e.Code == 0 {
		return false
	}
	r.Status, r.Trouble = e.Code, ForStatus(e.Code)
	for _, d := range e.Details {
		if m := geminiRetry().FindStringSubmatch("Please retry in " + d.RetryDelay); d.RetryDelay != "" && m != nil {
			r.RetryAfter = geminiDelay(m[1], m[2])
		}
		for _, v := range d.Violations {
			if strings.Contains(v.QuotaID, "PerDay") || strings.Contains(v.QuotaID, "Daily") {
				r.Trouble = UsageWindow
			}
		}
	}
	return true
}

// geminiDelay is n of unit (ms or s), at most a day.
func geminiDelay(n, unit string) time.Duration {
	f, err := strconv.ParseFloat(n, 64)
	if err != nil || f < 0 {
		return 0
	}
	if unit == "ms" {
		f /= 1000
	}
	return time.Duration(min(f, 86400) * float64(time.Second))
}
