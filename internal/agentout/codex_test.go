package agentout

import (
	"os"
	"strings"
	"testing"
	"time"
)

// The testdata is what the real Codex 0.169.0 printed with --json against
// modelapi's Responses API: a turn that ran its shell and ended, one
// resumed, and turns refused with a 429 (after its own five reconnects),
// a 401, a 503 and ChatGPT's usage_limit_reached two hours from then.
func TestCodexReadsWhatTheRealCodexPrinted(t *testing.T) {
	for _, c := range []struct {
		file    string
		failed  bool
		trouble Trouble
		status  int
		err     string
	}{
		{file: "codex-done.jsonl"},
		{file: "codex-resumed.jsonl"},
		{file: "codex-rate.jsonl", failed: true, trouble: RateLimited, status: 429, err: "exceeded retry limit, last status: 429 Too Many Requests"},
		{file: "codex-auth.jsonl", failed: true, trouble: AuthFailed, status: 401, err: "unexpected status 401 Unauthorized: Incorrect API key"},
		{file: "codex-overloaded.jsonl", failed: true, trouble: Overloaded, err: "Selected model is at capacity"},
		{file: "codex-usage.jsonl", failed: true, trouble: UsageWindow, err: "You’ve hit your usage limit."},
	} {
		out, err := os.ReadFile("testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		r := Of("codex", out)
		if !r.Seen || r.Failed != c.failed || r.Trouble != c.trouble || r.Status != c.status || !strings.HasPrefix(r.Error, c.err) {
			t.Errorf("%s: %+v", c.file, r)
		}
		if len(r.Session) != 36 || strings.Count(r.Session, "-") != 4 {
			t.Errorf("%s: session %q, want thread.started's thread id", c.file, r.Session)
		}
		if c.trouble == UsageWindow && (r.Reset.IsZero() || r.Reset.Hour() != 2 || r.Reset.Minute() != 29) {
			t.Errorf("%s: reset %v, want the minute after the 2:28 AM it names", c.file, r.Reset)
		}
	}
}

func TestCodexTroubleFromItsTexts(t *testing.T) {
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.Local)
	if got := codexReset("You’ve hit your usage limit. Try again at Dec 6th, 2026 2:28 PM.", now); !got.Equal(time.Date(2026, 12, 6, 14, 29, 0, 0, time.Local)) {
		t.Errorf("a reset on another day: %v", got)
	}
	if got := codexReset("You’ve hit your usage limit. Try again later.", now); !got.IsZero() {
		t.Errorf("no reset said: %v", got)
	}
	var r Result
	readCodex(&r, []byte(`{"type":"turn.failed","error":{"message":"Rate limit reached for gpt-5 on tokens per min. Please try again in 1.5s."}}`))
	if r.Trouble != RateLimited || r.RetryAfter != 1500*time.Millisecond {
		t.Errorf("a rate limit with its wait: %+v", r)
	}
	// A retry under way is no end; a later success clears an earlier error.
	r = Result{}
	readCodex(&r, []byte(`{"type":"error","message":"Reconnecting... 1/5 (unexpected status 401 Unauthorized)"}`))
	if r.Failed {
		t.Errorf("a reconnect read as a failure: %+v", r)
	}
	readCodex(&r, []byte(`{"type":"error","message":"stream disconnected before completion"}`))
	readCodex(&r, []byte(`{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}`))
	if !r.Seen || r.Failed || r.Error != "" {
		t.Errorf("a completed turn: %+v", r)
	}
	readCodex(&r, []byte(`{"type":"turn.failed","error":{"message":"`+strings.Repeat("x", 5000)+`"}}`))
	if len(r.Error) > maxText || r.Trouble != NoTrouble {
		t.Errorf("a long error is clipped, and no trouble: %d %q", len(r.Error), r.Trouble)
	}
}
