package agentout

import (
	"os"
	"strings"
	"testing"
	"time"
)

// readCapture reads a tool's output captured from a real run against
// internal/modelapi (testdata/<preset>-<case>.jsonl).
func readCapture(t *testing.T, preset, name string) Result {
	t.Helper()
	out, err := os.ReadFile("testdata/" + preset + "-" + name + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return Of(preset, out)
}

// Captured from opencode 1.18.33's `run --format json` against modelapi.
func TestOpencodeCaptured(t *testing.T) {
	done := readCapture(t, "opencode", "done")
	if !done.Seen || done.Failed || done.Trouble != NoTrouble || !strings.HasPrefix(done.Session, "ses_") {
		t.Errorf("a finished run: %+v", done)
	}
	auth := readCapture(t, "opencode", "401")
	if !auth.Failed || auth.Trouble != AuthFailed || auth.Status != 401 || auth.Error != "APIError: invalid x-api-key" || auth.Session == "" {
		t.Errorf("a refused key: %+v", auth)
	}
	// It gave up after its own retries, each waiting the retry-after.
	limit := readCapture(t, "opencode", "429")
	if !limit.Failed || limit.Trouble != RateLimited || limit.Status != 429 || limit.RetryAfter != 7*time.Second || !limit.Reset.IsZero() {
		t.Errorf("a rate limit: %+v", limit)
	}
}

func TestOpencodeUsageWindow(t *testing.T) {
	line := `{"type":"error","sessionID":"ses_1","error":{"name":"APIError","data":{"message":"You have reached your usage limit.","statusCode":429,` +
		`"responseHeaders":{"Anthropic-Ratelimit-Unified-Status":"rejected","anthropic-ratelimit-unified-reset":"1900000000","retry-after":"3600"}}}}`
	r := Of("opencode", []byte(line))
	if r.Trouble != UsageWindow || !r.Reset.Equal(time.Unix(1900000000, 0)) || r.RetryAfter != time.Hour {
		t.Errorf("a spent window: %+v", r)
	}
	quota := `{"type":"error","error":{"name":"APIError","data":{"statusCode":429,"responseBody":"{\"error\":{\"code\":\"insufficient_quota\"}}","responseHeaders":{"retry-after":"60"}}}}`
	if r := Of("opencode", []byte(quota)); r.Trouble != UsageWindow || r.Reset.IsZero() {
		t.Errorf("a spent quota: %+v", r)
	}
}

// Its output is the agent's: junk, long texts and odd figures are skipped
// or clipped, never trusted.
func TestOpencodeHostileOutput(t *testing.T) {
	long := strings.Repeat("x", 5000)
	out := "not json\n[1,2]\n{\"type\":\"text\",\"sessionID\":\"" + long + "\"}\n" +
		`{"type":"error","error":{"name":"","data":{"message":"line one` + `\n` + `line two","statusCode":-5,"responseHeaders":{"retry-after":"-3"}}}}`
	r := Of("opencode", []byte(out))
	if len(r.Session) != maxText || !r.Failed || r.Status != 0 || r.Trouble != NoTrouble || r.RetryAfter != 0 || r.Error != "line one" {
		t.Errorf("%+v", r)
	}
}
