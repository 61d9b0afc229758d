package agentout

import (
	"os"
	"strings"
	"testing"
	"time"
)

// Gemini CLI 0.61.0's stream-json output, captured from runs against
// modelapi: a build turn and each fault.
func TestGeminiOutput(t *testing.T) {
	cases := []struct {
		file string
		want Result
	}{
		{"gemini-build.jsonl", Result{Seen: true}},
		{"gemini-429.jsonl", Result{Seen: true, Failed: true, Trouble: RateLimited, Status: 429, RetryAfter: 30 * time.Second}},
		{"gemini-window.jsonl", Result{Seen: true, Failed: true, Trouble: UsageWindow, Status: 429}},
		{"gemini-401.jsonl", Result{Seen: true, Failed: true, Trouble: AuthFailed, Status: 401}},
		{"gemini-503.jsonl", Result{Seen: true, Failed: true, Trouble: Overloaded, Status: 503}},
	}
	for _, c := range cases {
		out, err := os.ReadFile("testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		got := Of("gemini", out)
		if len(got.Session) != 36 {
			t.Errorf("%s: session %q", c.file, got.Session)
		}
		if c.want.Failed != (got.Error != "") || strings.ContainsAny(got.Error, "\r\n") {
			t.Errorf("%s: error %q", c.file, got.Error)
		}
		got.Session, got.Error = "", ""
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.file, got, c.want)
		}
	}
}

// The texts Gemini CLI writes of a quota error, by how it classified it.
func TestGeminiTroubleFromMessages(t *testing.T) {
	cases := []struct {
		msg     string
		trouble Trouble
		status  int
		retry   time.Duration
	}{
		{"[API Error: {\"error\":{\"code\":403,\"message\":\"Permission denied\",\"status\":\"PERMISSION_DENIED\"}}]", AuthFailed, 403, 0},
		{"[API Error: {\"error\":{\"message\":\"quota\",\"status\":\"RESOURCE_EXHAUSTED\",\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.RetryInfo\",\"retryDelay\":\"1.5s\"}]}}]", RateLimited, 429, 1500 * time.Millisecond},
		{"[API Error: quota.\nPlease retry in 250ms.]\nPossible quota limitations in place or slow response times detected.", RateLimited, 429, 250 * time.Millisecond},
		{"[API Error: {\"error\":{\"code\":400,\"message\":\"bad request\",\"status\":\"INVALID_ARGUMENT\"}}]", NoTrouble, 400, 0},
		{"[API Error: Suggested retry after 30s.] but no hint: the task's own failure", NoTrouble, 0, 0},
		{"[API Error: {not json", NoTrouble, 0, 0},
	}
	for _, c := range cases {
		var r Result
		geminiTrouble(&r, c.msg)
		if r.Trouble != c.trouble || r.Status != c.status || r.RetryAfter != c.retry {
			t.Errorf("%q: %+v", c.msg, r)
		}
	}
}
