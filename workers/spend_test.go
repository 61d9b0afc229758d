package workers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// modelEndpoint is a stand-in model server: every chat completion reports
// 1,000 prompt and 100 completion tokens of qwen3-32b.
func modelEndpoint(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"model":"qwen3-32b","choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":100}}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// spendTree is a project with plan a claimed by w1 and settings.
func spendTree(t *testing.T, settings string) (*planfs.Tree, string) {
	dir := t.TempDir()
	if _, err := planfs.Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, ".plans", "features", "a.md"), []byte("# A\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte(settings), 0o644)
	tr, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := tr.Claim("features/a.md", "w1", 600)
	if err != nil {
		t.Fatal(err)
	}
	return tr, rel
}

// waitEvent waits for an event of kind in the tree's log.
func waitEvent(t *testing.T, tr *planfs.Tree, kind string) planfs.Event {
	t.Helper()
	for range 400 {
		events, _ := tr.Events()
		for _, e := range events {
			if e.Event == kind {
				return e
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("no %s event", kind)
	return planfs.Event{}
}

// procState is the one-letter state /proc gives pid (T: stopped).
func procState(t *testing.T, pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0]
}

func agentPID(t *testing.T, tr *planfs.Tree) int {
	states, _ := look.ReadStates(tr.Project)
	for _, st := range states {
		if st.AgentID == "w1" && st.Agent != nil {
			return st.Agent.PID
		}
	}
	t.Fatal("no agent in w1's state")
	return 0
}

// A run through its endpoint's proxy is metered; crossing its budget
// pauses it (its process stopped, its lease kept); an extension resumes it
// where it was and it finishes; the ledger has what it spent and claimed.
func TestRunPausedAtItsBudgetGoesOnWhenExtended(t *testing.T) {
	defer func(old time.Duration) { maxHeartbeat = old }(maxHeartbeat)
	maxHeartbeat = 50 * time.Millisecond
	tr, rel := spendTree(t, "budgets: {run: {tokens: 2500}}\nprices: {qwen3-32b: {input: 1, output: 2}}\n")
	d := &Driver{Tree: tr, Worker: model.Worker{AgentID: "w1", Tier: model.Mid, Model: "qwen3-32b"}, Endpoint: "local", BaseURL: modelEndpoint(t),
		Argv: []string{testkit.FakeAgent(t), "-calls", "5", "-every", "150ms", "-result", "success: all five calls made"}, TTL: 600, Grace: time.Second}
	if err := d.Start(nil); err != nil {
		t.Fatal(err)
	}
	defer d.Finish(0, "test")
	done := make(chan Outcome, 1)
	go func() { done <- d.Run(context.Background(), Job{Rel: rel, RunID: "run-1"}) }()

	paused := waitEvent(t, tr, "paused")
	if !strings.Contains(paused.Reason, "budget reached: the run's budget (2.5k tokens) spent") {
		t.Errorf("paused: %q", paused.Reason)
	}
	pid := agentPID(t, tr)
	if !testkit.Paused(pid) {
		t.Errorf("the paused agent is neither frozen nor stopped (state %q)", procState(t, pid))
	}
	if _, err := tr.Claim(rel, "w2", 600); err == nil {
		t.Error("a paused run's plan was claimed by another worker: its lease was not kept")
	}
	waitEvent(t, tr, "budget-notice")
	if err := ledger.Extend(tr.Project, ledger.Extension{Plan: "a", Tokens: 10_000, By: "op", At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	waitEvent(t, tr, "resumed")
	var o Outcome
	select {
	case o = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the resumed run never finished")
	}
	if o.Code != 0 || o.Plan != "review-needed/a.md" {
		t.Fatalf("outcome %+v", o)
	}
	var runs []ledger.Run
	ledger.Read(tr.Project, time.Time{}, func(r ledger.Run) { runs = append(runs, r) })
	if len(runs) != 1 {
		t.Fatalf("ledger: %+v", runs)
	}
	r := runs[0]
	want := ledger.Run{ID: "run-1", Plan: "a", Agent: "w1", Tier: "mid", Endpoint: "local", Model: "qwen3-32b", Input: 5000, Output: 500,
		CostUSD: 0.006, Priced: true, Source: ledger.Metered, Exit: 0, Mode: proc.ModeBuild, Claim: ledger.ClaimSuccess}
	r.Host, r.Start, r.End = "", time.Time{}, time.Time{}
	if r != want {
		t.Errorf("ledger run\n got %+v\nwant %+v", r, want)
	}
}

// A run stopped while paused at its budget is parked in blocked/ with what
// it spent, not put back for the next worker to spend more on.
func TestRunStoppedAtItsBudgetIsParked(t *testing.T) {
	defer func(old time.Duration) { maxHeartbeat = old }(maxHeartbeat)
	maxHeartbeat = 50 * time.Millisecond
	tr, rel := spendTree(t, "budgets: {plan: {usd: 0.002}}\nprices: {qwen3-32b: {input: 1, output: 2}}\n")
	d := &Driver{Tree: tr, Worker: model.Worker{AgentID: "w1", Tier: model.Mid, Model: "qwen3-32b"}, BaseURL: modelEndpoint(t),
		Argv: []string{testkit.FakeAgent(t), "-calls", "5", "-every", "150ms"}, TTL: 600, Grace: time.Second}
	if err := d.Start(nil); err != nil {
		t.Fatal(err)
	}
	defer d.Finish(0, "test")
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan Outcome, 1)
	go func() { done <- d.Run(ctx, Job{Rel: rel}) }()
	waitEvent(t, tr, "paused")
	stop()
	o := <-done
	if o.Plan != "blocked/a.md" || !strings.Contains(o.Note, "budget reached: the plan's budget ($0.002) spent") || !o.Stopped {
		t.Errorf("outcome %+v", o)
	}
}

// An agent without a base_url reports its own usage: counted as
// reported, not metered.
func TestRunUsageReportedByTheAgent(t *testing.T) {
	tr, rel := spendTree(t, "")
	d := &Driver{Tree: tr, Worker: model.Worker{AgentID: "w1", Tier: model.Frontier, Model: "claude"},
		Argv: []string{testkit.FakeAgent(t), "-usage-line", `{"input_tokens":700,"output_tokens":70,"cost_usd":0.05,"model":"claude-sonnet-4-5"}`}, TTL: 600, Grace: time.Second}
	if err := d.Start(nil); err != nil {
		t.Fatal(err)
	}
	defer d.Finish(0, "test")
	if o := d.Run(context.Background(), Job{Rel: rel}); o.Code != 0 {
		t.Fatalf("%+v", o)
	}
	var runs []ledger.Run
	ledger.Read(tr.Project, time.Time{}, func(r ledger.Run) { runs = append(runs, r) })
	if len(runs) != 1 || runs[0].Source != ledger.Reported || runs[0].Input != 700 || runs[0].CostUSD != 0.05 || !runs[0].Priced || runs[0].Model != "claude-sonnet-4-5" {
		t.Errorf("%+v", runs)
	}
}

// $FLEET_USAGE is followed as it grows: each line counted once, however
// often the driver looks; a file replaced is read again; a FIFO put in
// its place is refused, keeping what was counted.
func TestUsageFileFollowedAndRefused(t *testing.T) {
	dir := t.TempDir()
	f := &ledger.UsageFile{Path: filepath.Join(dir, "usage.jsonl")}
	appendLine := func(s string) {
		out, err := os.OpenFile(f.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString(s)
		out.Close()
	}
	input := func() int64 {
		r := f.Look()
		u, _ := r.Usage()
		return u.Input
	}
	if input() != 0 || f.Why() != nil {
		t.Fatalf("no file yet: %v", f.Why())
	}
	appendLine(`{"input_tokens":10}` + "\n" + `{"input_tokens":5`)
	if got := input(); got != 10 {
		t.Fatalf("a whole line and a half: %d", got)
	}
	appendLine(`}` + "\n")
	if got, again := input(), input(); got != 15 || again != 15 {
		t.Fatalf("the half line finished: %d, then %d", got, again)
	}
	os.Remove(f.Path)
	appendLine(`{"input_tokens":3}` + "\n")
	if got := input(); got != 3 {
		t.Fatalf("replaced: %d", got)
	}
	appendLine(`{"input_tokens":1}`)
	if got := input(); got != 4 {
		t.Fatalf("a whole last line without its newline: %d", got)
	}
	appendLine("\n")
	if got := input(); got != 4 {
		t.Fatalf("its newline: %d", got)
	}
	os.Remove(f.Path)
	if err := syscall.Mkfifo(f.Path, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := input(); got != 4 || f.Why() == nil || !strings.Contains(f.Why().Error(), "usage.jsonl is not a regular file") {
		t.Fatalf("a FIFO: %d, %v", got, f.Why())
	}
}
