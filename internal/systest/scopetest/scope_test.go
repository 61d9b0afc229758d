package scopetest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// inScope is a plan body that declares its scope: src/ and nothing else.
const inScope = "\n## Files in scope\n- src/\n"

// project is a git project (shared.go committed on main, so dev and every
// worktree have it) with the given plans.
func project(t *testing.T, plans ...fwtest.Plan) string {
	t.Helper()
	dir := fwtest.GitProject(t, plans...)
	os.WriteFile(filepath.Join(dir, "shared.go"), []byte("package x\n"), 0o644)
	testkit.Git(t, dir, "add", "shared.go")
	testkit.Git(t, dir, "commit", "-q", "-m", "shared")
	return dir
}

// endpoints writes endpoints.yaml: one endpoint (with on_scope_violation
// when onScope is set) whose executor is the scope agent with args.
func endpoints(t *testing.T, dir, onScope string, args ...string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("endpoints:\n  - name: local\n    tier: mid\n    model: fake-1\n")
	if onScope != "" {
		b.WriteString("    on_scope_violation: " + onScope + "\n")
	}
	b.WriteString("executor:\n")
	for _, a := range append([]string{scopeAgent(t)}, args...) {
		q, _ := json.Marshal(a)
		b.WriteString("  - " + string(q) + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "endpoints.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// start runs work-once --run --ensure-worktree for agent in the
// background; the returned func sends it SIGTERM and waits for it.
func start(t *testing.T, dir, agent string, extra ...string) (stop func() fwtest.Result) {
	t.Helper()
	cmd := fwtest.Cmd(dir, nil, append([]string{"work-once", "--run", "--ensure-worktree", "--agent-id", agent}, extra...)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan fwtest.Result, 1)
	go func() {
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		done <- fwtest.Result{Code: code, Stdout: out.String(), Stderr: errb.String()}
	}()
	var res *fwtest.Result
	stop = func() fwtest.Result {
		if res == nil {
			cmd.Process.Signal(syscall.SIGTERM)
			r := <-done
			res = &r
		}
		return *res
	}
	t.Cleanup(func() { stop() })
	return stop
}

func state(t *testing.T, dir, agent string) look.State {
	t.Helper()
	var st look.State
	if data, err := os.ReadFile(look.StatePath(dir, agent)); err == nil {
		json.Unmarshal(data, &st)
	}
	return st
}

func events(t *testing.T, dir, kind string) []planfs.Event {
	t.Helper()
	tree, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	all, err := tree.Events()
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(all, func(e planfs.Event) bool { return e.Event != kind })
}

func workerLog(dir, agent string) string {
	data, _ := os.ReadFile(look.LogPath(dir, agent))
	return string(data)
}

// An agent that edits a file outside its scope and works on: the worker
// log, the event log and the state file say so while it runs, and it is
// not stopped (warn is the default).
func TestOutOfScopeEditSeenWhileTheAgentRuns(t *testing.T) {
	t.Parallel()
	dir := project(t, fwtest.Plan{Rel: "features/x.md", Body: inScope})
	endpoints(t, dir, "", "-write", "src/a.go=package a", "-write", "notes.txt=mine", "-sleep", "60s")
	stop := start(t, dir, "w1")
	notes := filepath.Join(dir, "var", "worktrees", "w1", "notes.txt")
	fwtest.WaitFor(t, "the agent's edit", 30*time.Second, func() bool { _, err := os.Stat(notes); return err == nil })
	edited := time.Now()
	fwtest.WaitFor(t, "the violation in the state file", 10*time.Second, func() bool {
		return slices.Equal(state(t, dir, "w1").Violations, []string{"notes.txt"})
	})
	t.Logf("violation in the state file %v after the edit", time.Since(edited))
	st := state(t, dir, "w1")
	if st.State != look.StateRunning || st.Scope != "1 path out of scope" || !slices.Equal(st.Touched, []string{"notes.txt", "src/a.go"}) {
		t.Errorf("state %+v", st)
	}
	if !strings.Contains(workerLog(dir, "w1"), "scope violation: notes.txt outside the approved scope") {
		t.Errorf("worker log:\n%s", workerLog(dir, "w1"))
	}
	evs := events(t, dir, "scope-violation")
	if len(evs) != 1 || evs[0].Slug != "x" || evs[0].From != "in-progress/x.md" || evs[0].AgentID != "w1" || !slices.Equal(evs[0].Paths, []string{"notes.txt"}) {
		t.Errorf("events %+v", evs)
	}
	if !fwtest.Exists(dir, "in-progress/x.md") {
		t.Errorf("warn mode moved the plan")
	}
	if r := stop(); r.Code != fwtest.ExitError || !fwtest.Exists(dir, "features/x.md") {
		t.Errorf("stopped driver: %v", r)
	}
}

// Committed files count from the merge base with the integration branch;
// a touched .plans/ is a violation even without a scope. Warn mode moves
// the plan on to review-needed.
func TestCommittedAndPlansViolations(t *testing.T) {
	t.Parallel()
	t.Run("commit", func(t *testing.T) {
		t.Parallel()
		dir := project(t, fwtest.Plan{Rel: "features/x.md", Body: inScope})
		endpoints(t, dir, "", "-write", "src/a.go=package a", "-write", "other.go=package x", "-commit")
		r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "w1")
		if r.Code != 0 || !fwtest.Exists(dir, "review-needed/x.md") {
			t.Fatalf("%v", r)
		}
		if st := state(t, dir, "w1"); !slices.Equal(st.Violations, []string{"other.go"}) || !slices.Equal(st.Touched, []string{"other.go", "src/a.go"}) {
			t.Errorf("state %+v", st)
		}
		if evs := events(t, dir, "scope-violation"); len(evs) != 1 || !slices.Equal(evs[0].Paths, []string{"other.go"}) {
			t.Errorf("events %+v", evs)
		}
		if s := fwtest.GitOut(t, filepath.Join(dir, "var", "worktrees", "w1"), "status", "--porcelain"); s != "" {
			t.Errorf("the agent committed everything, yet: %q", s)
		}
	})
	// Tagged dev, its commit would be the merge base with a bare "dev",
	// and nothing would count as committed.
	t.Run("commit tagged dev", func(t *testing.T) {
		t.Parallel()
		dir := project(t, fwtest.Plan{Rel: "features/x.md", Body: inScope})
		endpoints(t, dir, "", "-write", "src/a.go=package a", "-write", "other.go=package x", "-commit", "-tag", "dev")
		r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "w1")
		if r.Code != 0 || !fwtest.Exists(dir, "review-needed/x.md") {
			t.Fatalf("%v", r)
		}
		// Contained, the tag stays in the agent's own git store; without
		// the sandbox it reaches the project, and the scanner must not care.
		_, noSandbox := sandbox.ABI()
		if tagged := fwtest.GitOut(t, dir, "tag", "--list", "dev") == "dev"; tagged != (noSandbox != nil) {
			t.Fatalf("a tag dev in the project: %v, with the sandbox unavailable: %v", tagged, noSandbox)
		}
		if st := state(t, dir, "w1"); !slices.Equal(st.Violations, []string{"other.go"}) || !slices.Equal(st.Touched, []string{"other.go", "src/a.go"}) {
			t.Errorf("state %+v", st)
		}
	})
	t.Run("plans", func(t *testing.T) {
		t.Parallel()
		dir := project(t, fwtest.Plan{Rel: "features/x.md"})
		endpoints(t, dir, "", "-write", ".plans/completed/x.md=done, honest", "-write", "a.go=package x", "-commit")
		r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "w1")
		if r.Code != 0 || !fwtest.Exists(dir, "review-needed/x.md") {
			t.Fatalf("%v", r)
		}
		if st := state(t, dir, "w1"); !slices.Equal(st.Violations, []string{".plans/completed/x.md"}) || st.Scope != "1 path out of scope" {
			t.Errorf("state %+v", st)
		}
		evs := events(t, dir, "scope-violation")
		if len(evs) != 1 || !strings.Contains(evs[0].Reason, ".plans/completed/x.md under .plans/") {
			t.Errorf("events %+v", evs)
		}
	})
}

// on_scope_violation: stop, in fleetwatch.yaml or on the endpoint: the
// agent is stopped at once and the plan parked in blocked/ with the paths
// as the reason. The endpoint's word wins over the file's.
func TestStopOnScopeViolation(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, yaml, endpoint string }{
		{"fleetwatch.yaml", "stop", ""},
		{"endpoint", "", "stop"},
		{"endpoint warns", "stop", "warn"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := project(t, fwtest.Plan{Rel: "features/x.md", Body: inScope})
			if c.yaml != "" {
				os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("on_scope_violation: "+c.yaml+"\n"), 0o644)
			}
			sleep := "60s"
			if c.endpoint == "warn" {
				sleep = "3s"
			}
			endpoints(t, dir, c.endpoint, "-write", "src/a.go=package a", "-write", "cmd/main.go=package main", "-write", "b.go=package x", "-commit", "-sleep", sleep)
			began := time.Now()
			// The endpoint's settings count when the worker runs as it.
			r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "w1", "--endpoint", "local")
			if c.endpoint == "warn" {
				if r.Code != 0 || !fwtest.Exists(dir, "review-needed/x.md") {
					t.Fatalf("warn: %v", r)
				}
				return
			}
			if took := time.Since(began); took > 45*time.Second {
				t.Errorf("the agent was not stopped: %v", took)
			}
			// Written before b.go, cmd/main.go is in whichever scan stops it.
			if r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, "scope violation: ") || !strings.Contains(r.Stderr, "cmd/main.go") ||
				!strings.Contains(r.Stderr, "; parked in blocked/") || !fwtest.Exists(dir, "blocked/x.md") {
				t.Fatalf("%v", r)
			}
			parks := events(t, dir, "park")
			if len(parks) != 1 || !strings.HasPrefix(parks[0].Reason, "scope violation: ") || !strings.Contains(parks[0].Reason, "cmd/main.go") || parks[0].From != "in-progress/x.md" {
				t.Errorf("park events %+v", parks)
			}
		})
	}
}

// A build in its scope (allowed generated files included) reaches
// review-needed; a plan with no scope says so in its state.
func TestInScopeAndNoScope(t *testing.T) {
	t.Parallel()
	t.Run("in scope", func(t *testing.T) {
		t.Parallel()
		dir := project(t, fwtest.Plan{Rel: "features/x.md", Fields: "Allowed generated files: gen/**, go.sum", Body: inScope})
		os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("on_scope_violation: stop\n"), 0o644)
		endpoints(t, dir, "", "-write", "src/a.go=package a", "-write", "gen/pb/a.pb.go=package pb", "-write", "go.sum=", "-commit")
		r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "w1")
		if r.Code != 0 || !fwtest.Exists(dir, "review-needed/x.md") {
			t.Fatalf("%v", r)
		}
		if st := state(t, dir, "w1"); st.Scope != "in scope (3 files)" || len(st.Violations) != 0 {
			t.Errorf("state %+v", st)
		}
		if evs := events(t, dir, "scope-violation"); len(evs) != 0 {
			t.Errorf("events %+v", evs)
		}
	})
	t.Run("no scope", func(t *testing.T) {
		t.Parallel()
		dir := project(t, fwtest.Plan{Rel: "features/x.md"})
		endpoints(t, dir, "", "-write", "anything.go=package x", "-sleep", "60s")
		stop := start(t, dir, "w1")
		fwtest.WaitFor(t, "the scan", 30*time.Second, func() bool {
			return slices.Contains(state(t, dir, "w1").Touched, "anything.go")
		})
		if st := state(t, dir, "w1"); st.Scope != "no scope check" || len(st.Violations) != 0 {
			t.Errorf("state %+v", st)
		}
		stop()
	})
}
