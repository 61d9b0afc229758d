package agentout

import (
	"strings"
	"testing"
)

// Captured from qwen-code 0.24.4's stream-json output against modelapi.
func TestQwenCaptured(t *testing.T) {
	r := readCapture(t, "qwen", "401")
	if !r.Seen || !r.Failed || r.Trouble != AuthFailed || r.Status != 401 || r.Error != "[API Error: 401 Incorrect API key provided.]" || r.Session == "" {
		t.Errorf("a refused key: %+v", r)
	}
}

func TestQwenResults(t *testing.T) {
	for _, c := range []struct {
		name, out string
		want      Result
	}{
		{"done, as --output-format json's one line",
			`[{"type":"system","session_id":"s1"},{"type":"result","subtype":"success","session_id":"s1","is_error":false,"result":"## Result"}]`,
			Result{Seen: true, Session: "s1"}},
		{"rate limited", `{"type":"result","session_id":"s2","is_error":true,"error":{"message":"[API Error: 429 Rate limit reached for requests.]"}}`,
			Result{Seen: true, Failed: true, Trouble: RateLimited, Status: 429, Session: "s2", Error: "[API Error: 429 Rate limit reached for requests.]"}},
		{"quota spent", `{"type":"result","is_error":true,"error":{"message":"[API Error: 429 You exceeded your current quota.]"}}`,
			Result{Seen: true, Failed: true, Trouble: UsageWindow, Status: 429, Error: "[API Error: 429 You exceeded your current quota.]"}},
		{"overloaded", `{"type":"result","is_error":true,"error":{"message":"[API Error: 503 The server is overloaded]"}}`,
			Result{Seen: true, Failed: true, Trouble: Overloaded, Status: 503, Error: "[API Error: 503 The server is overloaded]"}},
		{"the task's failure", `{"type":"result","is_error":true,"error":{"message":"Reached max session turns"}}`,
			Result{Seen: true, Failed: true, Error: "Reached max session turns"}},
		{"junk", "not json\n{\"type\":1}\n[1,2]\n{}", Result{}},
	} {
		if got := Of("qwen", []byte(c.out)); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	long := `{"type":"result","session_id":"` + strings.Repeat("s", 4000) + `","is_error":true,"error":{"message":"` + strings.Repeat("e", 4000) + `"}}`
	if r := Of("qwen", []byte(long)); len(r.Session) != maxText || len(r.Error) != maxText {
		t.Errorf("long texts are not clipped: %d %d", len(r.Session), len(r.Error))
	}
}
