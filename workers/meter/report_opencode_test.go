package meter

import (
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
