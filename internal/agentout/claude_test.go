package agentout

import (
	"os"
	"strings"
	"testing"
	"time"
)

// The result lines are what the real Claude Code 2.1.328 printed against
// modelapi's faults (testdata/claude-*.json).
func TestClaudeResults(t *testing.T) {
	for _, c := range []struct {
		file    string
		failed  bool
		trouble Trouble
		status  int
		err     string
		reset   string
	}{
		{file: "done"},
		{file: "usage", failed: true, trouble: UsageWindow, status: 429, err: "API Error: Request rejected (429) · You have reached your usage limit.", reset: "2026-12-05T03:27:45Z"},
		{file: "rate", failed: true, trouble: RateLimited, status: 429, err: "API Error: Request rejected (429) · This request would exceed your rate limit."},
		{file: "overloaded", failed: true, trouble: Overloaded, status: 529, err: "API Error: 529 Overloaded."},
		{file: "auth", failed: true, trouble: AuthFailed, status: 401, err: "Invalid API key · Fix external API key"},
	} {
		out, err := os.ReadFile("testdata/claude-" + c.file + ".json")
		if err != nil {
			t.Fatal(err)
		}
		r := Of("claude", out)
		if !r.Seen || r.Failed != c.failed || r.Trouble != c.trouble || r.Status != c.status || r.Session == "" {
			t.Errorf("%s: %+v", c.file, r)
		}
		if !strings.HasPrefix(r.Error, c.err) || (c.err == "" && r.Error != "") {
			t.Errorf("%s: error %q, want %q", c.file, r.Error, c.err)
		}
		if c.reset != "" && r.Reset.UTC().Format(time.RFC3339) != c.reset {
			t.Errorf("%s: reset %v, want %s", c.file, r.Reset, c.reset)
		}
	}
}

// Texts without the API's fields still say what they are; hostile lines
// are clipped or skipped.
func TestClaudeTexts(t *testing.T) {
	for _, c := range []struct {
		line    string
		trouble Trouble
		reset   int64
	}{
		{`{"type":"result","is_error":true,"result":"Claude AI usage limit reached|1765000000"}`, UsageWindow, 1765000000},
		{`{"type":"result","is_error":true,"terminal_reason":"api_error","result":"API Error: 529 {\"type\":\"error\"}"}`, Overloaded, 0},
		{`{"type":"result","is_error":true,"result":"API Error: 403 forbidden"}`, AuthFailed, 0},
		{`{"type":"result","subtype":"error_max_turns","is_error":false,"result":"ran out of turns"}`, NoTrouble, 0},
		{`{"type":"result","is_error":true,"result":"the tests fail"}`, NoTrouble, 0},
	} {
		r := Of("claude", []byte("not json\n"+c.line+"\n"))
		if !r.Failed || r.Trouble != c.trouble || (c.reset != 0 && r.Reset.Unix() != c.reset) {
			t.Errorf("%s: %+v", c.line, r)
		}
	}
	long := `{"type":"result","is_error":true,"session_id":"` + strings.Repeat("s", 5000) + `","result":"` + strings.Repeat("x", 5000) + `\nsecond line"}`
	if r := Of("claude", []byte(long)); len(r.Error) > maxText || len(r.Session) > maxText || !r.Failed {
		t.Errorf("not clipped: %d %d", len(r.Error), len(r.Session))
	}
	if r := Of("claude", []byte(`{"type":"assistant","is_error":true}`)); r.Seen {
		t.Errorf("a line that is no result was read: %+v", r)
	}
}
