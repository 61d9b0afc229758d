package spendtest

import (
	"bytes"
	"encoding/json"
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

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// endpoint is a stand-in OpenAI-style model server: each chat completion
// reports 1,000 prompt and 100 completion tokens of qwen3-32b.
func endpoint(t *testing.T) (string, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"model":"qwen3-32b","choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":100}}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", &calls
}

// project is a tree with plan export, an endpoint whose agent makes calls
// chat completions through {base_url}, and settings.
func project(t *testing.T, calls int, every time.Duration, settings string) (dir string, upstream *atomic.Int32) {
	dir = fwtest.NewTree(t, fwtest.Plan{Rel: "features/export.md"})
	url, upstream := endpoint(t)
	argv := []string{fwtest.FakeAgent(t), "-calls", strconv.Itoa(calls), "-every", every.String(), "-result", "success: exported"}
	var b strings.Builder
	fmt.Fprintf(&b, "endpoints:\n  - name: local\n    tier: mid\n    model: qwen3-32b\n    base_url: %q\n    command:\n", url)
	for _, a := range argv {
		q, _ := json.Marshal(a)
		b.WriteString("      - " + string(q) + "\n")
	}
	os.WriteFile(filepath.Join(dir, "endpoints.yaml"), []byte(b.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte(settings), 0o644)
	return dir, upstream
}

// worker starts `work-once --run` in the background; wait returns its
// exit code.
func worker(t *testing.T, dir string) (wait func() int) {
	cmd := fwtest.Cmd(dir, nil, "work-once", "--root", dir, "--run", "--endpoint", "local", "--agent-id", "w1", "--lease-ttl", "3")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		cmd.Wait()
		done <- cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	return func() int {
		select {
		case code := <-done:
			return code
		case <-time.After(60 * time.Second):
			t.Fatalf("the worker did not finish:\n%s", out.String())
			return -1
		}
	}
}

type inboxEntry struct {
	Slug, Kind, State string
	AgentID           string `json:"agent_id"`
}

// pausedEntry waits for the inbox to hold a paused run.
func pausedEntry(t *testing.T, dir string) inboxEntry {
	var got inboxEntry
	fwtest.WaitFor(t, "a paused run in the inbox", 30*time.Second, func() bool {
		r := fwtest.Run(t, dir, "inbox", "--root", dir, "--json")
		var entries []inboxEntry
		json.Unmarshal([]byte(r.Stdout), &entries)
		for _, e := range entries {
			if e.Kind == "paused" {
				got = e
				return true
			}
		}
		return false
	})
	return got
}

// stopped reports whether pid is held where it is: frozen in its cgroup,
// or stopped.
func stopped(t *testing.T, pid int) bool {
	if !testkit.Alive(pid) {
		t.Fatalf("process %d is gone", pid)
	}
	return testkit.Paused(pid)
}

// A run crossing its budget is paused (its agent stopped, checked in
// /proc), waits in the inbox, resumes when extended and finishes; the
// ledger then has its metered spend and claim, which usage and report read.
func TestBudgetPausesAndExtensionResumes(t *testing.T) {
	t.Parallel()
	dir, upstream := project(t, 5, 300*time.Millisecond, "budgets: {run: {tokens: 2500}}\nprices: {qwen3-32b: {input: 1, output: 2}}\n")
	wait := worker(t, dir)
	e := pausedEntry(t, dir)
	if e.Slug != "export" || e.AgentID != "w1" || !strings.HasPrefix(e.State, "budget reached: the run's budget (2.5k tokens) spent") {
		t.Errorf("inbox entry %+v", e)
	}
	st := fwtest.StateOf(t, dir, "w1")
	if st.Agent == nil || !stopped(t, st.Agent.PID) {
		t.Fatalf("the paused agent is not stopped: %+v", st.Agent)
	}
	held := upstream.Load()
	time.Sleep(500 * time.Millisecond)
	if n := upstream.Load(); n != held || n >= 5 {
		t.Errorf("the endpoint got calls while the run was paused: %d then %d", held, n)
	}
	if r := fwtest.Run(t, dir, "budget", "extend", "export", "--by", "10k", "--root", dir); r.Code != 0 {
		t.Fatalf("extend: %v", r)
	}
	if code := wait(); code != 0 {
		t.Fatalf("work-once exited %d", code)
	}
	if !fwtest.Exists(dir, "review-needed/export.md") {
		t.Error("the resumed run's plan did not reach review-needed/")
	}
	r := fwtest.Run(t, dir, "usage", "--root", dir, "--json", "--by", "endpoint")
	var u struct {
		Groups []struct {
			Key                string
			Runs               int
			Input              int64 `json:"input_tokens"`
			Output             int64 `json:"output_tokens"`
			Cost               float64
			CostUSD            float64 `json:"cost_usd"`
			Unpriced, Reported int
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &u); err != nil || len(u.Groups) != 1 {
		t.Fatalf("usage: %v %v", err, r)
	}
	if g := u.Groups[0]; g.Key != "local" || g.Runs != 1 || g.Input != 5000 || g.Output != 500 || g.CostUSD != 0.006 || g.Reported != 0 {
		t.Errorf("usage %+v", g)
	}
	if r := fwtest.Run(t, dir, "report", "--root", dir); r.Code != 0 || !strings.Contains(r.Stdout, "mid") {
		t.Errorf("report: %v", r)
	}
}

// A run paused at its budget and then stopped is parked in blocked/ with
// what it spent, never put back for the next worker to spend more on.
func TestStopAtBudgetParksWithTheSpend(t *testing.T) {
	t.Parallel()
	dir, _ := project(t, 5, 300*time.Millisecond, "budgets: {plan: {usd: 0.002}}\nprices: {qwen3-32b: {input: 1, output: 2}}\n")
	wait := worker(t, dir)
	pausedEntry(t, dir)
	if r := fwtest.Run(t, dir, "worker", "stop", "w1", "--root", dir); r.Code != 0 {
		t.Fatalf("stop: %v", r)
	}
	wait()
	if !fwtest.Exists(dir, "blocked/export.md") {
		t.Fatalf("the stopped run's plan is not in blocked/")
	}
	if events := fwtest.ReadRel(t, dir, "logs/events.jsonl"); !strings.Contains(events, `budget reached: the plan's budget ($0.002) spent`) {
		t.Errorf("the park's reason lacks the spend:\n%s", events)
	}
}

// The operator pauses a run by hand and resumes it: the agent stops where
// it is and goes on; a resume of a run that is not paused is refused.
func TestWorkerPauseAndResumeByHand(t *testing.T) {
	t.Parallel()
	dir, _ := project(t, 8, 500*time.Millisecond, "")
	wait := worker(t, dir)
	fwtest.WaitFor(t, "the agent to run", 30*time.Second, func() bool {
		if !fwtest.Exists(dir, "../var/fleet/workers/w1.json") {
			return false
		}
		st := fwtest.StateOf(t, dir, "w1")
		return st.Agent != nil && st.Pausable
	})
	if r := fwtest.Run(t, dir, "worker", "resume", "w1", "--root", dir); r.Code != 2 || !strings.Contains(r.Stderr, "w1 is not paused") {
		t.Errorf("resume before a pause: %v", r)
	}
	if r := fwtest.Run(t, dir, "worker", "pause", "w1", "--root", dir); r.Code != 0 {
		t.Fatalf("pause: %v", r)
	}
	e := pausedEntry(t, dir)
	if e.State != "paused by the operator" {
		t.Errorf("inbox %+v", e)
	}
	if st := fwtest.StateOf(t, dir, "w1"); !stopped(t, st.Agent.PID) {
		t.Error("the agent paused by hand is not stopped")
	}
	if r := fwtest.Run(t, dir, "worker", "resume", "w1", "--root", dir); r.Code != 0 {
		t.Fatalf("resume: %v", r)
	}
	if code := wait(); code != 0 {
		t.Errorf("work-once exited %d after a resume", code)
	}
	if r := fwtest.Run(t, dir, "worker", "pause", "nobody", "--root", dir); r.Code != 2 || !strings.Contains(r.Stderr, `no worker "nobody"`) {
		t.Errorf("an unknown worker: %v", r)
	}
}

// A spent daily budget stops new claims: work-once is idle (exit 1) and
// says which budget; the board says it too.
func TestSpentDailyBudgetStopsClaims(t *testing.T) {
	t.Parallel()
	dir, upstream := project(t, 1, 10*time.Millisecond, "budgets: {endpoint_day: {local: {tokens: 1k}}}\n")
	now := time.Now().UTC().Format(time.RFC3339Nano)
	ledgerLine := `{"run":"r0","plan":"other","agent":"w0","tier":"mid","endpoint":"local","model":"qwen3-32b","input_tokens":900,"output_tokens":200,"cost_usd":0,"priced":false,"source":"metered","start":"` + now + `","end":"` + now + `","exit":0,"committed":false}` + "\n"
	os.MkdirAll(filepath.Join(dir, "var", "fleet", "usage"), 0o755)
	os.WriteFile(filepath.Join(dir, "var", "fleet", "usage", "runs.jsonl"), []byte(ledgerLine), 0o644)
	r := fwtest.Run(t, dir, "work-once", "--root", dir, "--run", "--endpoint", "local", "--agent-id", "w1")
	if r.Code != 1 || !strings.Contains(r.Stderr, "endpoint local's daily budget (1k tokens) is spent: 1.1k tokens, $0.00 today") {
		t.Fatalf("work-once under a spent budget: %v", r)
	}
	if upstream.Load() != 0 || !fwtest.Exists(dir, "features/export.md") {
		t.Error("a plan was claimed or the endpoint called under a spent budget")
	}
	if b := fwtest.Run(t, dir, "board", "--root", dir, "--json"); !strings.Contains(b.Stdout, "endpoint local's daily budget (1k tokens) is spent") {
		t.Errorf("the board does not say the budget is spent:\n%s", b.Stdout)
	}
}

// A plan whose text cannot fit the endpoint's max_context is one that
// endpoint's workers skip, saying why.
func TestMaxContextSkipsAPlanTooBig(t *testing.T) {
	t.Parallel()
	dir, _ := project(t, 1, 10*time.Millisecond, "")
	reg := filepath.Join(dir, "endpoints.yaml")
	text, _ := os.ReadFile(reg)
	os.WriteFile(reg, []byte(strings.Replace(string(text), "    model: qwen3-32b\n", "    model: qwen3-32b\n    max_context: 100\n", 1)), 0o644)
	os.WriteFile(filepath.Join(dir, ".plans", "features", "export.md"), []byte("# Export\n\n## Goal\n\n"+strings.Repeat("Export every note as CSV. ", 40)+"\n"), 0o644)
	r := fwtest.Run(t, dir, "work-once", "--root", dir, "--list", "--endpoint", "local", "--agent-id", "w1")
	if !strings.Contains(r.Stdout+r.Stderr, "over local's max_context of 100") {
		t.Errorf("--list does not say the plan is too big:\n%v", r)
	}
	r = fwtest.Run(t, dir, "work-once", "--root", dir, "--once", "--endpoint", "local", "--agent-id", "w1")
	if r.Code != 1 || !fwtest.Exists(dir, "features/export.md") {
		t.Errorf("a plan too big for the endpoint was claimed: %v", r)
	}
}
