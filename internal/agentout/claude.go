package agentout

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Claude Code 2.1.328's `--output-format json` prints one result line at
// the end of its turn. A turn the API refused ends with is_error true,
// terminal_reason "api_error", the status and type the API answered
// (api_error_status 429, api_error_type "rate_limit_error") and the
// message it showed as the result, "API Error: Request rejected (429) ·
// You have reached your usage limit. …". A 401 reads "Invalid API key ·
// Fix external API key". It retries 429 and 529 itself first
// (CLAUDE_CODE_MAX_RETRIES, default 10), except a rejected usage window.
func init() { readers["claude"] = readClaude }

// claudeResult is the fields of Claude Code's result line read here.
type claudeResult struct {
	Type           string `json:"type"`
	Subtype        string `json:"subtype"`
	IsError        bool   `json:"is_error"`
	Result         string `json:"result"`
	SessionID      string `json:"session_id"`
	TerminalReason string `json:"terminal_reason"`
	APIErrorStatus int    `json:"api_error_status"`
	APIErrorType   string `json:"api_error_type"`
}

func readClaude(r *Result, line []byte) {
	if line[0] != '{' {
		return
	}
	var c claudeResult
	if json.Unmarshal(line, &c) != nil || c.Type != "result" {
		return
	}
	*r = Result{Seen: true, Session: clip(c.SessionID)}
	// An error subtype (error_max_turns, error_during_execution) is a
	// failed turn whatever is_error says.
	r.Failed = c.IsError || strings.HasPrefix(c.Subtype, "error")
	if !r.Failed {
		return
	}
	r.Error = clip(strings.TrimSpace(c.Result))
	if r.Error == "" {
		r.Error = clip(c.Subtype)
	}
	r.Status = c.status()
	r.Trouble = ForStatus(r.Status)
	if r.Trouble == NoTrouble {
		r.Trouble = claudeErrorTypes[c.APIErrorType]
	}
	if reset, ok := windowReset(c.Result); ok && (r.Trouble == RateLimited || r.Trouble == NoTrouble) {
		r.Trouble, r.Reset = UsageWindow, reset
	}
}

// status is the HTTP status of a failed turn: the one Claude Code reports,
// else one its API error text names.
func (c claudeResult) status() int {
	if c.APIErrorStatus == 0 && (c.TerminalReason == "api_error" || strings.HasPrefix(c.Result, "API Error")) {
		return statusIn(c.Result)
	}
	return c.APIErrorStatus
}

// claudeErrorTypes are the troubles the API's error types tell when the
// status does not; any other type is NoTrouble.
var claudeErrorTypes = map[string]Trouble{
	"rate_limit_error":     RateLimited,
	"overloaded_error":     Overloaded,
	"authentication_error": AuthFailed,
	"permission_error":     AuthFailed,
}

// apiStatus is the status an "API Error" text names: "(429)" or "529 ".
var apiStatus = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`API Error:?[^0-9]{0,40}\(?([1-5][0-9][0-9])\b`) })

// statusIn is the status an error text names, 0 when none.
func statusIn(text string) int {
	m := apiStatus().FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// windowReset reads a spent usage window from an error text, with its
// reset when the text gives one: the API's "You have reached your usage
// limit. Your limit will reset at 2026-12-05T03:27:45Z." and Claude
// Code's own "Claude AI usage limit reached|1765000000". A window whose
// reset is not said returns a zero time and true.
func windowReset(text string) (time.Time, bool) {
	low := strings.ToLower(text)
	if !strings.Contains(low, "usage limit") && !strings.Contains(low, "hit your limit") {
		return time.Time{}, false
	}
	if m := resetStamp().FindStringSubmatch(text); m != nil {
		if t, err := time.Parse(time.RFC3339, m[1]); err == nil {
			return t, true
		}
	}
	if _, after, ok := strings.Cut(text, "limit reached|"); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(after), 10, 64)
		if err == nil && n > 0 && n < 1<<40 {
			return time.Unix(n, 0), true
		}
	}
	return time.Time{}, true
}

// resetStamp is an RFC 3339 time after "reset".
var resetStamp = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)reset[a-z ]{0,12}(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d))`)
})
