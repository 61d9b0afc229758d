package windowtest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/systest/remotetest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// Two machines share claims through a git remote. A run on machine A
// meets a spent window (the API's 429 with Anthropic's unified limit
// rejected, seen by the metering proxy; the agent only exits 1): its plan
// is handed back, and the endpoint is shut on the remote, so machine B's
// worker of the same endpoint claims nothing and calls nothing until the
// reset, while another endpoint's worker there takes the plan.
func TestShutEndpointOnEveryMachine(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	reset := time.Now().Add(time.Hour).Unix()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("anthropic-ratelimit-unified-status", "rejected")
		w.Header().Set("anthropic-ratelimit-unified-reset", strconv.FormatInt(reset, 10))
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"type":"error","error":{"type":"rate_limit_error","message":"usage limit"}}`)
	}))
	t.Cleanup(api.Close)
	f := remotetest.NewFleet(t, fwtest.Plan{Rel: "features/a.md"})
	agent := strconv.Quote(fwtest.FakeAgent(t))
	endpoints := "endpoints:\n" +
		"  - name: sub\n    tier: mid\n    model: m\n    base_url: " + api.URL + "\n    command: [" + agent + ", -calls, \"1\", -exit, \"1\"]\n" +
		"  - name: other\n    tier: mid\n    model: m\n    command: [" + agent + ", -commit]\n"
	var dirs []string
	for range 2 {
		dir := f.Clone(t, f.Bare)
		if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("claims: {backend: git, remote: origin}\nsandbox: off\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "endpoints.yaml"), []byte(endpoints), 0o644); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	remotetest.NeedBackend(t, dirs[0])
	a, b := dirs[0], dirs[1]
	r := fwtest.Run(t, a, "work-once", "--root", a, "--run", "--endpoint", "sub", "--agent-id", "a1")
	log, _ := os.ReadFile(look.LogPath(a, "a1"))
	if r.Code != fwtest.ExitError || !strings.Contains(string(log), "endpoint trouble (usage_window)") || calls.Load() != 1 {
		t.Fatalf("machine A's run: %v (%d calls)\nlog:\n%s", r, calls.Load(), log)
	}
	if out := fwtest.GitOut(t, f.Bare, "for-each-ref", "--format=%(objecttype)", "refs/fleetwatch/endpoints/"); out != "blob" {
		t.Errorf("the remote's endpoint refs: %q", out)
	}
	r = fwtest.Run(t, b, "work-once", "--root", b, "--run", "--endpoint", "sub", "--agent-id", "b1")
	if r.Code != fwtest.ExitNothing || !strings.Contains(r.Stderr, "endpoint sub is shut until "+time.Unix(reset, 0).UTC().Format(time.RFC3339)) || calls.Load() != 1 {
		t.Errorf("machine B's worker of the shut endpoint should claim nothing and call nothing: %v (%d calls)", r, calls.Load())
	}
	if out := fwtest.Run(t, b, "endpoints", "show", "--root", b); !strings.Contains(out.Stdout, "sub\tshut\tuntil ") {
		t.Errorf("endpoints show on B: %v", out)
	}
	if r := fwtest.Run(t, b, "work-once", "--root", b, "--run", "--endpoint", "other", "--agent-id", "b2"); r.Code != 0 {
		log, _ := os.ReadFile(look.LogPath(b, "b2"))
		t.Errorf("machine B's other endpoint should take the plan: %v\nlog:\n%s", r, log)
	}
	// The operator's clear reaches the remote too.
	if r := fwtest.Run(t, a, "endpoints", "clear", "sub", "--root", a); r.Code != 0 {
		t.Fatalf("clear: %v", r)
	}
	if out := fwtest.GitOut(t, f.Bare, "for-each-ref", "refs/fleetwatch/endpoints/"); out != "" {
		t.Errorf("the endpoint's ref is left after clear: %q", out)
	}
}
