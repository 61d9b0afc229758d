package coordtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/model"
)

// agentRun is what the fake agent recorded of one run.
type agentRun struct {
	Env          map[string]string
	Feedback     string `json:"feedback"`
	ApprovedPlan string `json:"approved_plan"`
}

// planFirstProject is a project with one plan-first plan, a.md, and the
// fake agent (recording each run to the returned file) as its executor.
func planFirstProject(t *testing.T, agentArgs ...string) (dir, rec string) {
	t.Helper()
	dir = fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md", Fields: "Plan first: yes"})
	rec = filepath.Join(t.TempDir(), "rec.json")
	fwtest.WithExecutor(t, dir, append([]string{fwtest.FakeAgent(t), "-record", rec, "-scope", "src/,README.md"}, agentArgs...)...)
	return dir, rec
}

func readRun(t *testing.T, rec string) agentRun {
	t.Helper()
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	var r agentRun
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func work(t *testing.T, dir, agent string, extra ...string) fwtest.Result {
	t.Helper()
	return fwtest.Run(t, dir, append([]string{"work-once", "--root", dir, "--run", "--agent-id", agent}, extra...)...)
}

// agentsOwn reports whether a plan turn's FLEET_PROPOSAL is name in a
// folder of the agent's own, outside the project: the driver hands it in.
func agentsOwn(dir, p, name string) bool {
	return filepath.Base(p) == name && filepath.IsAbs(p) && !strings.HasPrefix(p, dir+string(filepath.Separator))
}

func proposal(dir string, n string) string {
	return filepath.Join(dir, "var", "fleet", "run", "proposals", "a", n+".md")
}

// planTurn runs agent's first run on a.md and checks it left a proposal
// waiting for approval.
func planTurn(t *testing.T, dir, rec, agent string, extra ...string) {
	t.Helper()
	r := work(t, dir, agent, extra...)
	if r.Code != 0 || !strings.Contains(r.Stdout, "in-progress/a.md") {
		t.Fatalf("plan turn: %v", r)
	}
	run := readRun(t, rec)
	if run.Env["FLEET_MODE"] != "plan" || !agentsOwn(dir, run.Env["FLEET_PROPOSAL"], "1.md") {
		t.Fatalf("plan turn env: %v", run.Env)
	}
	if !fwtest.Exists(dir, "in-progress/a.md") {
		t.Fatalf("plan left in-progress/: %v", r)
	}
	if l := fwtest.RunLease(t, dir, "in-progress/a.md"); l.Awaiting != model.AwaitApproval || l.AgentID != agent {
		t.Fatalf("lease after the plan turn: %+v", l)
	}
}

func TestPlanTurnApproveThenBuild(t *testing.T) {
	t.Parallel()
	dir, rec := planFirstProject(t)
	planTurn(t, dir, rec, "w1")

	// Every face says so.
	list := fwtest.Run(t, dir, "work-once", "--root", dir, "--list", "--agent-id", "w1")
	if !strings.Contains(list.Stdout, "w1 (awaiting approval)") {
		t.Errorf("--list: %v", list)
	}
	js := fwtest.Run(t, dir, "work-once", "--root", dir, "--list", "--json", "--agent-id", "w1")
	if !strings.Contains(js.Stdout, `"awaiting_text":"awaiting approval"`) {
		t.Errorf("--list --json: %v", js)
	}
	board := fwtest.Run(t, dir, "board", "--root", dir, "--once", "--width", "200")
	if !strings.Contains(board.Stdout, "awaiting approval") {
		t.Errorf("board: %v", board)
	}
	bj := fwtest.Run(t, dir, "board", "--root", dir, "--json")
	if !strings.Contains(bj.Stdout, `"awaiting_text": "awaiting approval"`) {
		t.Errorf("board --json: %v", bj)
	}
	// Another worker's bare pick skips it.
	if r := work(t, dir, "w2"); r.Code != fwtest.ExitNothing {
		t.Errorf("another worker's pick: %v", r)
	}
	// Its own agent's next run does not take it up before a decision.
	if r := work(t, dir, "w1"); r.Code != fwtest.ExitNothing {
		t.Errorf("the agent again before a decision: %v", r)
	}
	var inbox []struct {
		Slug, State, AgentID string
		N                    int
		Scope                []string
	}
	r := fwtest.Run(t, dir, "inbox", "--root", dir, "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &inbox); err != nil || len(inbox) != 1 {
		t.Fatalf("inbox --json: %v %v", r, err)
	}
	if e := inbox[0]; e.Slug != "a" || e.N != 1 || e.State != "awaiting approval" || strings.Join(e.Scope, ",") != "src/,README.md" {
		t.Fatalf("inbox entry: %+v", e)
	}
	if r := fwtest.Run(t, dir, "inbox", "--root", dir); !strings.Contains(r.Stdout, "awaiting approval") || !strings.Contains(r.Stdout, "src/, README.md") {
		t.Errorf("inbox: %v", r)
	}

	// The agent cannot approve itself: an agent run decides nothing.
	if r := fwtest.RunEnv(t, dir, []string{"FLEET_AGENT_ID=w1"}, "approve", "--root", dir, "a"); r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, "agent run") {
		t.Errorf("self-approval: %v", r)
	}
	// Nor under another name, from a person's environment.
	if r := fwtest.Run(t, dir, "approve", "--root", dir, "--agent-id", "w1", "a"); r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, "self-approval") {
		t.Errorf("self-approval as w1: %v", r)
	}
	if r := fwtest.Run(t, dir, "approve", "--root", dir, "a"); r.Code != 0 {
		t.Fatalf("approve: %v", r)
	}
	if ev := fwtest.ReadRel(t, dir, "logs/events.jsonl"); !strings.Contains(ev, `"event":"approved","slug":"a","from":"in-progress/a.md","to":"in-progress/a.md","agent_id":"operator-tester"`) {
		t.Errorf("no approved event by the operator:\n%s", ev)
	}
	if r := work(t, dir, "w2"); r.Code != fwtest.ExitNothing {
		t.Errorf("another worker took the approved plan within the TTL: %v", r)
	}
	r = work(t, dir, "w1")
	if r.Code != 0 || !fwtest.Exists(dir, "review-needed/a.md") {
		t.Fatalf("the build: %v", r)
	}
	run := readRun(t, rec)
	if run.Env["FLEET_MODE"] != "build" || run.Env["FLEET_APPROVED_PLAN"] != proposal(dir, "1") || !strings.Contains(run.ApprovedPlan, "- src/") {
		t.Fatalf("build run: %+v", run)
	}
	if ev := fwtest.ReadRel(t, dir, "logs/events.jsonl"); !strings.Contains(ev, `"event":"resumed"`) {
		t.Errorf("no resumed event:\n%s", ev)
	}
}

func TestRejectPlansAgainWithTheNote(t *testing.T) {
	t.Parallel()
	dir, rec := planFirstProject(t)
	planTurn(t, dir, rec, "w1")
	if r := fwtest.Run(t, dir, "reject", "--root", dir, "a"); r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, "--note") {
		t.Errorf("reject without a note: %v", r)
	}
	if r := fwtest.Run(t, dir, "reject", "--root", dir, "a", "--note", "touch only src/"); r.Code != 0 {
		t.Fatalf("reject: %v", r)
	}
	r := work(t, dir, "w1")
	if r.Code != 0 {
		t.Fatalf("second plan turn: %v", r)
	}
	run := readRun(t, rec)
	if run.Env["FLEET_MODE"] != "plan" || !agentsOwn(dir, run.Env["FLEET_PROPOSAL"], "2.md") || run.Feedback != "touch only src/\n" {
		t.Fatalf("second plan turn: %+v", run)
	}
	if l := fwtest.RunLease(t, dir, "in-progress/a.md"); l.Awaiting != model.AwaitApproval {
		t.Fatalf("lease: %+v", l)
	}
	if r := fwtest.Run(t, dir, "inbox", "--root", dir); !strings.Contains(r.Stdout, "a ") || !strings.Contains(r.Stdout, " 2 ") {
		t.Errorf("inbox after the second turn: %v", r)
	}
}

func TestForgedProposalRefused(t *testing.T) {
	t.Parallel()
	dir, rec := planFirstProject(t)
	planTurn(t, dir, rec, "w1")
	f, err := os.OpenFile(proposal(dir, "1"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("- /home/\n")
	f.Close()
	r := fwtest.Run(t, dir, "approve", "--root", dir, "a")
	if r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, "changed since w1 wrote it") || strings.Count(r.Stderr, "\n") != 1 {
		t.Fatalf("approve of a forged proposal: %v", r)
	}
	if l := fwtest.RunLease(t, dir, "in-progress/a.md"); l.Awaiting != model.AwaitApproval {
		t.Fatalf("lease: %+v", l)
	}
}

func TestNoProposalGivesThePlanBack(t *testing.T) {
	t.Parallel()
	dir, _ := planFirstProject(t, "-proposal-to", "none")
	r := work(t, dir, "w1")
	if r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, "the plan turn wrote no proposal") {
		t.Fatalf("plan turn without a proposal: %v", r)
	}
	if !fwtest.Exists(dir, "features/a.md") {
		t.Fatal("the plan was not given back")
	}
}

// An approved plan whose agent is gone (no run of it within one lease TTL
// after the approval) is taken up by another fit worker.
func TestGoneAgentsPlanTakenOver(t *testing.T) {
	t.Parallel()
	dir, rec := planFirstProject(t)
	planTurn(t, dir, rec, "w1")
	if r := fwtest.Run(t, dir, "approve", "--root", dir, "a"); r.Code != 0 {
		t.Fatalf("approve: %v", r)
	}
	time.Sleep(1500 * time.Millisecond)
	r := work(t, dir, "w2", "--lease-ttl", "1")
	if r.Code != 0 || !strings.Contains(r.Stderr, "decided for w1, who is gone") {
		t.Fatalf("takeover: %v", r)
	}
	run := readRun(t, rec)
	if run.Env["FLEET_AGENT_ID"] != "w2" || run.Env["FLEET_MODE"] != "build" || run.Env["FLEET_APPROVED_PLAN"] != proposal(dir, "1") {
		t.Fatalf("takeover run: %+v", run.Env)
	}
	if !fwtest.Exists(dir, "review-needed/a.md") {
		t.Fatal("not in review-needed/")
	}
	if ev := fwtest.ReadRel(t, dir, "logs/events.jsonl"); !strings.Contains(ev, "takeover from w1") {
		t.Errorf("no takeover event:\n%s", ev)
	}
}

// approve --edit approves the operator's text, and the agent's named run
// (--slug) of its decided plan resumes it and builds that text.
func TestApproveEditedThenNamedResume(t *testing.T) {
	t.Parallel()
	dir, rec := planFirstProject(t)
	planTurn(t, dir, rec, "w1")
	editor := filepath.Join(t.TempDir(), "editor")
	script := "#!/bin/sh\nprintf '# Tighter\\n\\n## Files in scope\\n- src/a.go\\n' > \"$1\"\n"
	if err := os.WriteFile(editor, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r := fwtest.RunEnv(t, dir, []string{"EDITOR=" + editor, "VISUAL="}, "approve", "--root", dir, "--edit", "a")
	if r.Code != 0 || !strings.Contains(r.Stdout, "as you edited it") {
		t.Fatalf("approve --edit: %v", r)
	}
	if r := fwtest.Run(t, dir, "inbox", "--root", dir); !strings.Contains(r.Stdout, "approved by operator-tester") || !strings.Contains(r.Stdout, "src/a.go") {
		t.Errorf("inbox after the approval: %v", r)
	}
	r = work(t, dir, "w1", "--slug", "a")
	if r.Code != 0 || !fwtest.Exists(dir, "review-needed/a.md") {
		t.Fatalf("named resume: %v", r)
	}
	run := readRun(t, rec)
	if run.Env["FLEET_APPROVED_PLAN"] != filepath.Join(filepath.Dir(proposal(dir, "1")), "1.approved.md") || !strings.Contains(run.ApprovedPlan, "src/a.go") {
		t.Fatalf("build of the edited plan: %+v", run)
	}
}

// In git, the worker that takes over a gone agent's approved plan gets its
// feature branch, handed over from the first agent's worktree.
func TestGoneAgentsBranchHandedOver(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/a.md", Fields: "Plan first: yes"})
	rec := filepath.Join(t.TempDir(), "rec.json")
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-record", rec, "-scope", "src/", "-commit")
	planTurn(t, dir, rec, "w1", "--ensure-worktree")
	first := readRun(t, rec)
	if first.Env["FLEET_WORKTREE"] != filepath.Join(dir, "var", "worktrees", "w1") {
		t.Fatalf("plan turn ran in %q", first.Env["FLEET_WORKTREE"])
	}
	if r := fwtest.Run(t, dir, "approve", "--root", dir, "a"); r.Code != 0 {
		t.Fatalf("approve: %v", r)
	}
	time.Sleep(1500 * time.Millisecond)
	r := work(t, dir, "w2", "--lease-ttl", "1", "--ensure-worktree")
	if r.Code != 0 || !strings.Contains(r.Stderr, "taken over from agent w1") {
		t.Fatalf("takeover in git: %v", r)
	}
	run := readRun(t, rec)
	wt := filepath.Join(dir, "var", "worktrees", "w2")
	if run.Env["FLEET_WORKTREE"] != wt || run.Env["FLEET_MODE"] != "build" {
		t.Fatalf("build run: %v", run.Env)
	}
	branch := fwtest.GitOut(t, wt, "rev-parse", "--abbrev-ref", "HEAD")
	if branch != model.FeatureBranch("a") {
		t.Fatalf("w2 works on %q", branch)
	}
	if log := fwtest.GitOut(t, dir, "log", "--oneline", branch); !strings.Contains(log, "fakeagent commit") {
		t.Fatalf("the build's commit is not on %s:\n%s", branch, log)
	}
}

// An endpoint with plan_first plans every plan first, with its
// plan_command for the plan turn and its command for the build.
func TestEndpointPlanFirstAndPlanCommand(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	rec := filepath.Join(t.TempDir(), "rec.json")
	fa := strconv.Quote(fwtest.FakeAgent(t))
	yaml := "endpoints:\n  - name: planner\n    tier: mid\n    model: fake-1\n    plan_first: true\n" +
		"    sandbox_write: [" + strconv.Quote(filepath.Dir(rec)) + "]\n" +
		"    command: [" + fa + ", -record, " + strconv.Quote(rec) + ", build-cmd]\n" +
		"    plan_command: [" + fa + ", -record, " + strconv.Quote(rec) + ", -scope, 'src/', plan-cmd, '{mode}']\n"
	if err := os.WriteFile(filepath.Join(dir, "endpoints.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := work(t, dir, "w1", "--endpoint", "planner"); r.Code != 0 {
		t.Fatalf("plan turn: %v", r)
	}
	var got struct{ Args []string }
	data, _ := os.ReadFile(rec)
	json.Unmarshal(data, &got)
	if strings.Join(got.Args, " ") != "-record "+rec+" -scope src/ plan-cmd plan" {
		t.Fatalf("plan turn argv %q", got.Args)
	}
	if r := fwtest.Run(t, dir, "approve", "--root", dir, "a"); r.Code != 0 {
		t.Fatalf("approve: %v", r)
	}
	if r := work(t, dir, "w1", "--endpoint", "planner"); r.Code != 0 || !fwtest.Exists(dir, "review-needed/a.md") {
		t.Fatalf("build: %v", r)
	}
	data, _ = os.ReadFile(rec)
	json.Unmarshal(data, &got)
	if strings.Join(got.Args, " ") != "-record "+rec+" build-cmd" {
		t.Fatalf("build argv %q", got.Args)
	}
}
