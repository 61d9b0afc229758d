package meter

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// Gemini's answers carry usageMetadata: whole in a body, as running totals
// in a stream's events; a token count is free.
func TestProxyMetersGemini(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, ":countTokens"):
			fmt.Fprint(w, `{"totalTokens":31}`)
		case r.URL.Query().Get("alt") == "sse":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"h"}]}}],"usageMetadata":{"promptTokenCount":900,"totalTokenCount":900},"modelVersion":"gemini-2.5-pro"}`+"\n\n")
			fmt.Fprint(w, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"i"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":900,"candidatesTokenCount":40,"thoughtsTokenCount":60,"cachedContentTokenCount":512,"totalTokenCount":1000},"modelVersion":"gemini-2.5-pro"}`+"\n\n")
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{"command":"true"}}}]}}],"usageMetadata":{"promptTokenCount":120,"candidatesTokenCount":7,"toolUsePromptTokenCount":3,"totalTokenCount":130},"modelVersion":"gemini-2.5-flash"}`)
		}
	}))
	t.Cleanup(up.Close)
	p, err := Start(up.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	post(t, p.URL()+"/v1beta/models/gemini-2.5-flash:generateContent", `{"contents":[]}`)
	want := Usage{Input: 123, Output: 7, Model: "gemini-2.5-flash", Calls: 1}
	if got := p.Usage(); got != want {
		t.Errorf("a body: %+v, want %+v", got, want)
	}
	post(t, p.URL()+"/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", `{"contents":[]}`)
	want.Add(Usage{Input: 900, Output: 100, Cached: 512, Model: "gemini-2.5-pro", Calls: 1})
	if got := p.Usage(); got != want {
		t.Errorf("a stream: %+v, want %+v", got, want)
	}
	post(t, p.URL()+"/v1beta/models/gemini-2.5-pro:countTokens", `{"contents":[]}`)
	if got := p.Usage(); got != want {
		t.Errorf("a token count counted: %+v, want %+v", got, want)
	}
}

// Gemini CLI's stream-json output (0.61.0, a build turn against modelapi):
// its result's stats are the run's usage, its last assistant message the
// text with the ## Result.
func TestReportedByGeminiCLI(t *testing.T) {
	data, err := os.ReadFile("testdata/gemini-cli.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	for _, l := range strings.Split(string(data), "\n") {
		rep.Line([]byte(l))
	}
	if u, ok := rep.Usage(); !ok || u != (Usage{Input: 200, Output: 40}) {
		t.Errorf("usage %+v (%v)", u, ok)
	}
	if rep.Text() != "## Result\ncommitted" {
		t.Errorf("text %q", rep.Text())
	}
}
