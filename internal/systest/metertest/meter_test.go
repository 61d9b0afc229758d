package metertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/meter"
)

// bigAnswer is more than the 8 MiB of a JSON answer the proxy holds.
const bigAnswer = 9 << 20

// oddAnswer is an answer of a shape no provider has.
const oddAnswer = `{"text":"hello","tokens":{"in":50,"out":7}}`

// upstream is a scripted model server; the first element of a request's
// path picks its answer. askedUsage counts the streamed requests that
// asked for their usage.
type upstream struct {
	*httptest.Server
	askedUsage atomic.Int32
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	switch strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)[0] {
	case "negative":
		fmt.Fprint(w, `{"model":"qwen3-32b","choices":[{"message":{"content":"hi"}}],"usage":{"input_tokens":-200000,"output_tokens":-15}}`)
	case "huge":
		fmt.Fprint(w, `{"model":"qwen3-32b","choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":9000000000000000,"completion_tokens":9000000000000000}}`)
	case "stream":
		var req struct {
			Options struct {
				IncludeUsage bool `json:"include_usage"`
			} `json:"stream_options"`
		}
		json.Unmarshal(body, &req)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"model\":\"qwen3-32b\",\"choices\":[{\"delta\":{\"content\":\"hi\"}}],\"usage\":null}\n\n")
		if req.Options.IncludeUsage {
			u.askedUsage.Add(1)
			fmt.Fprint(w, "data: {\"model\":\"qwen3-32b\",\"choices\":[],\"usage\":{\"prompt_tokens\":300,\"completion_tokens\":20}}\n\n")
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	case "big":
		fmt.Fprintf(w, `{"model":"qwen3-32b","choices":[{"message":{"content":"%s"}}],"usage":{"prompt_tokens":1234,"completion_tokens":5678}}`, strings.Repeat("a", bigAnswer))
	default:
		fmt.Fprint(w, oddAnswer)
	}
}

// project is a tree with plan export and an endpoint whose agent POSTs
// each body to {base_url}PATH, base_url being the upstream under kind.
func project(t *testing.T, up *upstream, kind, path string, bodies ...string) string {
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/export.md"})
	argv := append([]string{fwtest.Program(t, "./testdata/caller"), path}, bodies...)
	var b strings.Builder
	fmt.Fprintf(&b, "endpoints:\n  - name: local\n    tier: mid\n    model: qwen3-32b\n    base_url: %q\n    command:\n", up.URL+"/"+kind+"/v1")
	for _, a := range argv {
		q, _ := json.Marshal(a)
		b.WriteString("      - " + string(q) + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "endpoints.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// run runs the plan to its end with a real driver and returns its record
// in the ledger and the worker's log.
func run(t *testing.T, dir string) (ledger.Run, string) {
	r := fwtest.Run(t, dir, "work-once", "--root", dir, "--run", "--endpoint", "local", "--agent-id", "w1")
	log, _ := os.ReadFile(look.LogPath(dir, "w1"))
	if r.Code != 0 {
		t.Fatalf("work-once: %v\nlog:\n%s", r, log)
	}
	var mine []ledger.Run
	if _, err := ledger.Read(dir, time.Time{}, func(run ledger.Run) {
		if run.Agent == "w1" {
			mine = append(mine, run)
		}
	}); err != nil || len(mine) != 1 {
		t.Fatalf("the ledger holds %d runs of w1 (%v); log:\n%s", len(mine), err, log)
	}
	return mine[0], string(log)
}

// spent is what `fleetwatch usage --by by` says key spent, in tokens.
func spent(t *testing.T, dir, by, key string) int64 {
	r := fwtest.Run(t, dir, "usage", "--root", dir, "--json", "--by", by)
	var u struct{ Groups []ledger.Group }
	if err := json.Unmarshal([]byte(r.Stdout), &u); err != nil {
		t.Fatalf("usage --by %s: %v: %v", by, err, r)
	}
	for _, g := range u.Groups {
		if g.Key == key {
			return g.Input + g.Output
		}
	}
	t.Fatalf("usage --by %s has no %s: %v", by, key, r)
	return 0
}

// An upstream answering with counts below zero takes nothing off the run,
// its plan or the day: the call is estimated from its bytes and marked.
func TestCountsBelowZeroNeverLowerTheSpend(t *testing.T) {
	t.Parallel()
	dir := project(t, newUpstream(t), "negative", "/chat/completions", `{"model":"qwen3-32b","messages":[{"role":"user","content":"hi"}]}`)
	// The plan and the day spent 1,000 tokens already.
	now := time.Now().UTC().Format(time.RFC3339Nano)
	before := `{"run":"r0","plan":"export","agent":"w0","tier":"mid","endpoint":"local","model":"qwen3-32b","input_tokens":900,"output_tokens":100,"cost_usd":0,"priced":false,"source":"metered","start":"` + now + `","end":"` + now + `","exit":0,"committed":false}` + "\n"
	os.MkdirAll(filepath.Join(dir, "var", "fleet", "usage"), 0o755)
	os.WriteFile(filepath.Join(dir, filepath.FromSlash(ledger.File)), []byte(before), 0o644)
	rec, log := run(t, dir)
	if rec.Input < 0 || rec.Output < 0 || rec.Tokens() == 0 || rec.Estimated != 1 {
		t.Errorf("the run's record: %d in, %d out, %d calls estimated; want more than nothing, estimated", rec.Input, rec.Output, rec.Estimated)
	}
	today := time.Now().Format(time.DateOnly)
	if p, d := spent(t, dir, "plan", "export"), spent(t, dir, "day", today); p <= 1000 || p != 1000+rec.Tokens() || d != p {
		t.Errorf("the plan spent %d and the day %d tokens, want more than the 1000 before: 1000 + the run's %d", p, d, rec.Tokens())
	}
	if !strings.Contains(log, "estimated from their bytes") {
		t.Errorf("the log does not say the call was estimated:\n%s", log)
	}
}

// A count past any model's counts for 10M tokens a call.
func TestAHugeCountIsCappedPerCall(t *testing.T) {
	t.Parallel()
	dir := project(t, newUpstream(t), "huge", "/chat/completions", `{"model":"qwen3-32b"}`, `{"model":"qwen3-32b"}`)
	rec, _ := run(t, dir)
	if rec.Tokens() != 2*meter.MaxCallTokens || rec.Estimated != 0 {
		t.Errorf("two calls of 18e15 tokens each counted %d tokens (%d estimated), want %d", rec.Tokens(), rec.Estimated, 2*meter.MaxCallTokens)
	}
}

// A streamed chat completion that does not ask for its usage is made to by
// the proxy, and metered from it.
func TestAStreamIsAskedForItsUsage(t *testing.T) {
	t.Parallel()
	up := newUpstream(t)
	dir := project(t, up, "stream", "/chat/completions", `{"model":"qwen3-32b","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	rec, _ := run(t, dir)
	if n := up.askedUsage.Load(); n != 1 {
		t.Errorf("the upstream saw %d streamed requests ask for their usage, want 1", n)
	}
	if rec.Input != 300 || rec.Output != 20 || rec.Estimated != 0 {
		t.Errorf("the stream metered %d in, %d out (%d estimated), want 300 and 20", rec.Input, rec.Output, rec.Estimated)
	}
}

// An answer of 9 MiB, past what the proxy holds, is metered from its end.
func TestAnAnswerTooBigToHoldIsMeteredFromItsEnd(t *testing.T) {
	t.Parallel()
	dir := project(t, newUpstream(t), "big", "/chat/completions", `{"model":"qwen3-32b"}`)
	rec, _ := run(t, dir)
	if rec.Input != 1234 || rec.Output != 5678 || rec.Estimated != 0 {
		t.Errorf("a %d-byte answer metered %d in, %d out (%d estimated), want 1234 and 5678", bigAnswer, rec.Input, rec.Output, rec.Estimated)
	}
}

// An answer of a shape nobody reads is counted from its bytes, four a
// token, and the run, its log and `usage` say so.
func TestAnAnswerOfAnUnknownShapeIsEstimated(t *testing.T) {
	t.Parallel()
	body := `{"prompt":"` + strings.Repeat("x", 398) + `"}`
	dir := project(t, newUpstream(t), "odd", "/generate", body)
	rec, log := run(t, dir)
	wantIn, wantOut := int64(len(body)+3)/4, int64(len(oddAnswer)+3)/4
	if rec.Input != wantIn || rec.Output != wantOut || rec.Estimated != 1 || rec.Source != ledger.Metered {
		t.Errorf("the run's record: %d in, %d out, %d estimated, %s; want %d, %d, 1, metered", rec.Input, rec.Output, rec.Estimated, rec.Source, wantIn, wantOut)
	}
	if !strings.Contains(log, "1 of 1 calls answered with no usage that could be read, estimated from their bytes") {
		t.Errorf("the log does not say so:\n%s", log)
	}
	r := fwtest.Run(t, dir, "usage", "--root", dir)
	if !strings.Contains(r.Stdout, "1 runs had calls answered with no usage that could be read: estimated from their bytes (4 bytes a token)") {
		t.Errorf("usage does not say so: %v", r)
	}
	var raw map[string]any
	line, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(ledger.File)))
	if json.Unmarshal(line, &raw) != nil || raw["estimated_calls"] != float64(1) {
		t.Errorf("the ledger's line does not carry estimated_calls: %s", line)
	}
}
