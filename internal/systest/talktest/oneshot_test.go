package talktest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// runInBackground starts `work-once --run` for agent on slug and returns
// its command, waited for by the test's end.
func runInBackground(t *testing.T, dir, agent, slug string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := fwtest.Cmd(dir, nil, "work-once", "--run", "--ensure-worktree", "--agent-id", agent, "--slug", slug)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, &out
}

// waitAsking waits until agent's state says it waits for input.
func waitAsking(t *testing.T, dir, agent string) look.State {
	t.Helper()
	var st look.State
	fwtest.WaitFor(t, agent+" waiting for input", 60*time.Second, func() bool {
		st = stateNow(dir, agent)
		return st.Asking != nil
	})
	return st
}

// stateNow is agent's state file as it is now, a zero one before it is
// written.
func stateNow(dir, agent string) look.State {
	states, _ := look.ReadStates(dir)
	for _, st := range states {
		if st.AgentID == agent {
			return st
		}
	}
	return look.State{}
}

func logOf(dir, agent string) string {
	b, _ := os.ReadFile(look.LogPath(dir, agent))
	return string(b)
}

// An agent's question (fleetwatch ask, through its driver) makes its run
// wait for input — the state file says so with the question — until a
// person answers; the answer is what the agent's command prints, and the
// exchange is in the event log.
func TestAgentAsksAndWaitsForTheAnswer(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/db.md"})
	script := `a=$("$0" ask "Postgres 15 or 16?") || exit 3; printf '%s' "$a" > answer.txt && git add answer.txt && git commit -qm answer`
	fwtest.WithExecutor(t, dir, "sh", "-c", script, fwtest.Exe(t))
	run, out := runInBackground(t, dir, "w1", "db")
	st := waitAsking(t, dir, "w1")
	if st.Asking.Question != "Postgres 15 or 16?" || !strings.Contains(st.Note, "waiting for input") {
		t.Fatalf("the state while asking: asking %+v, note %q", st.Asking, st.Note)
	}
	if r := fwtest.Run(t, dir, "answer", "w1", "--allow"); r.Code != 2 || !strings.Contains(r.Stderr, "offers no option") {
		t.Errorf("--allow on a question: %v", r)
	}
	r := fwtest.Run(t, dir, "answer", "w1", "16, the one the other services run")
	if r.Code != 0 || !strings.Contains(r.Stdout, "w1: answered") {
		t.Fatalf("the answer: %v\nlog:\n%s", r, logOf(dir, "w1"))
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("the run: %v\n%s\nlog:\n%s", err, out, logOf(dir, "w1"))
	}
	if got := fwtest.GitOut(t, dir, "show", "refs/heads/feature/db:answer.txt"); got != "16, the one the other services run" {
		t.Errorf("the agent heard %q", got)
	}
	if st := fwtest.StateOf(t, dir, "w1"); st.Asking != nil {
		t.Errorf("the exited worker still asks: %+v", st.Asking)
	}
	wantEvent(t, dir, "answer", "tester", "answered: 16, the one")
}

// wantEvent finds the event log's line for a message of kind by who.
func wantEvent(t *testing.T, dir, kind, who, reason string) {
	t.Helper()
	for _, e := range fwtest.EventsOf(t, dir) {
		if e["event"] == kind && strings.Contains(e["agent_id"].(string), who) && strings.Contains(e["reason"].(string), reason) && e["worker"] == "w1" {
			return
		}
	}
	t.Errorf("no %s event by %s saying %q in %v", kind, who, reason, fwtest.EventsOf(t, dir))
}

// A note to a one-shot run cannot reach it: it is kept for the plan's next
// run, which finds it in $FLEET_NOTES, and forgotten once that run ended
// well. An interrupt of a one-shot run, and any message to a worker not
// running, are refused with the reason (exit 1).
func TestOneShotRunKeepsNotesForTheNextRun(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/api.md"})
	mark := filepath.Join(t.TempDir(), "go")
	script := `while [ ! -e "` + mark + `" ]; do sleep 0.05; done; cat "${FLEET_NOTES:-/dev/null}" > notes.txt; date +%N > run.txt; git add notes.txt run.txt && git commit -qm run`
	fwtest.WithExecutor(t, dir, "sh", "-c", script)
	fwtest.Grant(t, dir, filepath.Dir(mark))
	if r := fwtest.Run(t, dir, "tell", "w1", "hello"); r.Code != 1 || !strings.Contains(r.Stderr, "no worker") {
		t.Errorf("a note to no worker: %v", r)
	}
	run, out := runInBackground(t, dir, "w1", "api")
	fwtest.WaitFor(t, "w1 running its agent", 30*time.Second, func() bool { return stateNow(dir, "w1").Agent != nil })
	start := time.Now()
	r := fwtest.Run(t, dir, "tell", "w1", "use the v2 API")
	took := time.Since(start)
	if r.Code != 0 || !strings.Contains(r.Stdout, "w1: kept") {
		t.Fatalf("a note to a one-shot run: %v", r)
	}
	t.Logf("tell answered by the driver in %v", took)
	if r := fwtest.Run(t, dir, "interrupt", "w1"); r.Code != 1 || !strings.Contains(r.Stderr, "no turn to interrupt") {
		t.Errorf("an interrupt of a one-shot run: %v", r)
	}
	os.WriteFile(mark, nil, 0o644)
	if err := run.Wait(); err != nil {
		t.Fatalf("the first run: %v\n%s", err, out)
	}
	if got := fwtest.GitOut(t, dir, "show", "refs/heads/feature/api:notes.txt"); got != "" {
		t.Errorf("the running run heard the note: %q", got)
	}
	if r := fwtest.Run(t, dir, "tell", "w1", "too late"); r.Code != 1 || !strings.Contains(r.Stderr, "exited") {
		t.Errorf("a note to an exited worker: %v", r)
	}
	wantEvent(t, dir, "tell", "tester", "kept: use the v2 API")
	// Sent back for more work: the next run gets the note.
	fwtest.Want(t, fwtest.Run(t, dir, "review", "api", "--needs-work", "the v2 API, please"), 0)
	run2, out2 := runInBackground(t, dir, "w1", "api")
	if err := run2.Wait(); err != nil {
		t.Fatalf("the second run: %v\n%s\nlog:\n%s", err, out2, logOf(dir, "w1"))
	}
	if got := fwtest.GitOut(t, dir, "show", "refs/heads/feature/api:notes.txt"); !strings.Contains(got, "use the v2 API") || strings.Contains(got, "too late") {
		t.Errorf("the next run's notes: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "var/fleet/notes/api.md")); !os.IsNotExist(err) {
		t.Errorf("the notes outlived the run that took them: %v", err)
	}
}

// A question nobody answers within wait_for_answer: stops the run and
// parks its plan in blocked/, saying what it asked.
func TestUnansweredQuestionParksThePlan(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/db.md"})
	f, err := os.OpenFile(filepath.Join(dir, "fleetwatch.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("wait_for_answer: 2s\n")
	f.Close()
	fwtest.WithExecutor(t, dir, "sh", "-c", `"$0" ask "Postgres 15 or 16?"; sleep 60`, fwtest.Exe(t))
	cmd := fwtest.Cmd(dir, nil, "work-once", "--run", "--ensure-worktree", "--agent-id", "w1", "--slug", "db", "--lease-ttl", "6")
	out, err := cmd.CombinedOutput()
	if err == nil || !fwtest.Exists(dir, "blocked/db.md") {
		t.Fatalf("the run: %v\n%s\nlog:\n%s", err, out, logOf(dir, "w1"))
	}
	if log := logOf(dir, "w1"); !strings.Contains(log, "no answer in 2s to the agent's question: Postgres 15 or 16?") {
		t.Errorf("the log does not say why the plan was parked:\n%s", log)
	}
	parked := false
	for _, e := range fwtest.EventsOf(t, dir) {
		parked = parked || e["to"] == "blocked/db.md" && strings.Contains(e["reason"].(string), "Postgres 15 or 16?")
	}
	if !parked {
		t.Errorf("the event log's park does not say the question: %v", fwtest.EventsOf(t, dir))
	}
}

// A message to a run whose lease is no longer its own (taken over while
// its driver has not yet noticed) is refused with the reason, and nothing
// is kept for it.
func TestMessageRefusedWhenTheLeaseIsLost(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/api.md"})
	fwtest.WithExecutor(t, dir, "sleep", "60")
	// A minute between heartbeats: the driver does not notice the theft
	// before the note comes.
	cmd := fwtest.Cmd(dir, nil, "work-once", "--run", "--agent-id", "w1", "--slug", "api", "--lease-ttl", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopDriver(cmd) })
	fwtest.WaitFor(t, "w1 running its agent", 30*time.Second, func() bool { return stateNow(dir, "w1").Agent != nil })
	fwtest.PutLease(t, dir, "in-progress/api.md", fwtest.AnchorLease("in-progress/api.md", "thief", 0, 600))
	r := fwtest.Run(t, dir, "tell", "w1", "hello")
	if r.Code != 1 || !strings.Contains(r.Stderr, "refused: the run no longer holds its plan's lease") {
		t.Fatalf("a note to a run that lost its lease: %v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "var/fleet/notes/api.md")); !os.IsNotExist(err) {
		t.Errorf("the refused note was kept: %v", err)
	}
	wantEvent(t, dir, "tell", "tester", "refused: hello (the run no longer holds")
}

// The notes folder is the driver's: one replaced by a symlink is refused,
// and nothing is written where it points.
func TestNoteNotKeptThroughASymlink(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/api.md"})
	fwtest.WithExecutor(t, dir, "sleep", "60")
	elsewhere := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "var/fleet"), 0o755)
	if err := os.Symlink(elsewhere, filepath.Join(dir, "var/fleet/notes")); err != nil {
		t.Fatal(err)
	}
	cmd := fwtest.Cmd(dir, nil, "work-once", "--run", "--agent-id", "w1", "--slug", "api")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopDriver(cmd) })
	fwtest.WaitFor(t, "w1 running its agent", 30*time.Second, func() bool { return stateNow(dir, "w1").Agent != nil })
	r := fwtest.Run(t, dir, "tell", "w1", "hello")
	if r.Code != 1 || !strings.Contains(r.Stderr, "the note could not be kept") || !strings.Contains(r.Stderr, "symlink") {
		t.Fatalf("a note kept through a symlink: %v", r)
	}
	if left, _ := os.ReadDir(elsewhere); len(left) != 0 {
		t.Errorf("the note was written where the symlink points: %v", left)
	}
}

// stopDriver stops a driver as an operator would (SIGTERM: it stops its
// agent and gives its plan back) and waits for it, so nothing writes in
// the project while the test's folder goes.
func stopDriver(cmd *exec.Cmd) {
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
}
