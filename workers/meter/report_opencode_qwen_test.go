package meter

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// opencode's JSON events: each step's tokens, summed; the cache counts in
// the input and the reasoning in the output. The capture is a real run of
// opencode 1.18.33 against internal/modelapi (two steps of 100 in, 20 out).
func TestReportedByOpencode(t *testing.T) {
	f, err := os.Open("testdata/opencode.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, ok := Reported(f); !ok || got != (Usage{Input: 200, Output: 40, CostUSD: 0.0012}) {
		t.Errorf("%+v (%v)", got, ok)
	}
	cached := `{"type":"step_finish","part":{"type":"step-finish","tokens":{"input":10,"output":5,"reasoning":7,"cache":{"read":300,"write":40}},"cost":0.01}}`
	if got, _ := Reported(strings.NewReader(cached)); got != (Usage{Input: 350, Output: 12, Cached: 300, CacheWrite: 40, CostUSD: 0.01}) {
		t.Errorf("with a cache: %+v", got)
	}
	bad := `{"type":"step_finish","part":{"tokens":{"input":-10,"output":5}}}`
	if _, ok := Reported(strings.NewReader(bad)); ok {
		t.Error("a negative figure was taken")
	}
}

// qwen-code's stream-json result line is Claude Code's shape: the run's
// usage, read once (its assistant lines' usage is not summed again).
// Captured from qwen-code 0.24.4 against internal/modelapi.
func TestReportedByQwen(t *testing.T) {
	f, err := os.Open("testdata/qwen.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rep Report
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rep.Line(sc.Bytes())
	}
	if got, ok := rep.Usage(); !ok || got != (Usage{Input: 200, Output: 40}) || rep.Text() != "## Result\nwrote hello.txt" {
		t.Errorf("%+v (%v) %q", got, ok, rep.Text())
	}
}
