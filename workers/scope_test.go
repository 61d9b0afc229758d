package workers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/seat"
)

// scopeRig is a git project with a plan tree, agent w1's worktree on the
// plan's feature branch (from dev), and the plan claimed by w1.
type scopeRig struct {
	dir, wt, rel string
	tree         *planfs.Tree
}

func newScopeRig(t *testing.T) scopeRig {
	t.Helper()
	dir := testkit.Repo(t)
	if _, err := planfs.Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, ".plans", "features", "x.md"), []byte("# X\n"), 0o644)
	tree, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	claimed, err := tree.Claim("features/x.md", "w1", 600)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := seat.Ensure(dir, "w1", "x")
	if err != nil {
		t.Fatal(err)
	}
	return scopeRig{dir: dir, wt: wt.Path, rel: claimed, tree: tree}
}

// run runs script (sh) as w1's agent in its worktree on job, cancelled when
// the test ends; it returns the outcome on a channel.
func (g scopeRig) run(t *testing.T, job Job, script string) (*Driver, <-chan Outcome) {
	t.Helper()
	d := &Driver{Tree: g.tree, Worker: model.Worker{AgentID: "w1"}, Argv: []string{"sh", "-c", script}, TTL: 600, Grace: time.Second}
	if err := d.Start(nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out, ran := make(chan Outcome, 1), make(chan struct{})
	job.Rel, job.Worktree = g.rel, g.wt
	if job.Base == "" {
		job.Base = "refs/heads/dev"
	}
	go func() {
		defer close(ran)
		out <- d.Run(ctx, job)
	}()
	t.Cleanup(func() {
		cancel()
		<-ran
		d.Finish(0, "test")
	})
	return d, out
}

func (g scopeRig) state(t *testing.T) look.State {
	t.Helper()
	var st look.State
	data, err := os.ReadFile(look.StatePath(g.dir, "w1"))
	if err == nil {
		err = json.Unmarshal(data, &st)
	}
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// waitState waits (generously) until the state file satisfies ok and says
// how long it took.
func (g scopeRig) waitState(t *testing.T, what string, ok func(look.State) bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !ok(g.state(t)) {
		if time.Since(start) > 20*time.Second {
			t.Fatalf("timed out waiting for %s; state %+v", what, g.state(t))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

func (g scopeRig) events(t *testing.T, kind string) []planfs.Event {
	t.Helper()
	all, err := g.tree.Events()
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(all, func(e planfs.Event) bool { return e.Event != kind })
}

func (g scopeRig) logText(t *testing.T) string {
	data, _ := os.ReadFile(look.LogPath(g.dir, "w1"))
	return string(data)
}

const gitCommit = `git -c user.name=a -c user.email=a@example.com -c commit.gpgsign=false commit -q -m work`

// An uncommitted edit outside the scope is seen while the agent still
// runs: state file, worker log and one event, and the agent goes on.
func TestScopeScannerSeesAnEditWhileTheAgentRuns(t *testing.T) {
	t.Parallel()
	g := newScopeRig(t)
	scope := &model.Scope{Patterns: []string{"src/"}}
	_, out := g.run(t, Job{Scope: scope}, `mkdir -p src && echo a > src/a.go && echo n > "notes 1.txt" && echo e > .env.fleetwatch && touch started && sleep 30`)
	took := g.waitState(t, "the violation", func(st look.State) bool { return len(st.Violations) > 0 })
	t.Logf("violation in the state file %v after the agent was started", took)
	st := g.state(t)
	if want := []string{"notes 1.txt", "src/a.go", "started"}; !slices.Equal(st.Touched, want) {
		t.Errorf("touched %q, want %q", st.Touched, want)
	}
	if !slices.Equal(st.Violations, []string{"notes 1.txt", "started"}) || st.Scope != "2 paths out of scope" {
		t.Errorf("violations %q, scope %q", st.Violations, st.Scope)
	}
	evs := g.events(t, "scope-violation")
	if len(evs) != 1 || evs[0].From != g.rel || evs[0].Slug != "x" || evs[0].AgentID != "w1" || !slices.Equal(evs[0].Paths, st.Violations) {
		t.Errorf("events %+v", evs)
	}
	if !strings.Contains(g.logText(t), "scope violation: notes 1.txt, started outside the approved scope") {
		t.Errorf("log:\n%s", g.logText(t))
	}
	select {
	case o := <-out:
		t.Fatalf("warn mode stopped the agent: %+v", o)
	case <-time.After(10 * scanEvery):
	}
	if evs := g.events(t, "scope-violation"); len(evs) != 1 {
		t.Errorf("a violation is reported once, got %d events", len(evs))
	}
}

// A commit counts from the merge base with the integration branch: a
// renamed file is both its names, and stop mode parks the plan in blocked/
// with the paths as the reason.
func TestScopeScannerStopsOnACommittedRename(t *testing.T) {
	t.Parallel()
	g := newScopeRig(t)
	scope := &model.Scope{Patterns: []string{"docs/**"}}
	_, out := g.run(t, Job{Scope: scope, StopOnViolation: true}, `mkdir -p docs && git mv README docs/README && `+gitCommit+` && sleep 30`)
	var o Outcome
	select {
	case o = <-out:
	case <-time.After(20 * time.Second):
		t.Fatal("the agent was not stopped")
	}
	if o.Code != -1 || o.Plan != "blocked/x.md" || o.Note != "scope violation: README; parked in blocked/" {
		t.Fatalf("outcome %+v", o)
	}
	parks := g.events(t, "park")
	if len(parks) != 1 || parks[0].Reason != "scope violation: README" {
		t.Errorf("park events %+v", parks)
	}
	if st := g.state(t); !slices.Equal(st.Touched, []string{"README", "docs/README"}) {
		t.Errorf("touched %q", st.Touched)
	}
}

// A file under .plans/ is a violation even with no declared scope; warn
// mode then moves the plan on as usual.
func TestScopeScannerWithoutScopeChecksPlans(t *testing.T) {
	t.Parallel()
	g := newScopeRig(t)
	_, out := g.run(t, Job{}, `mkdir -p .plans/features && echo x > .plans/features/y.md && echo b > b.go && git add b.go && `+gitCommit)
	o := <-out
	if !o.OK() || o.Plan != "review-needed/x.md" {
		t.Fatalf("outcome %+v", o)
	}
	st := g.state(t)
	if !slices.Equal(st.Violations, []string{".plans/features/y.md"}) || st.Scope != "1 path out of scope" {
		t.Errorf("state %+v", st)
	}
	if !strings.Contains(g.logText(t), "scope violation: .plans/features/y.md under .plans/, which only fleetwatch moves") {
		t.Errorf("log:\n%s", g.logText(t))
	}
}

// The last look after exit 0 catches what the agent did between ticks, and
// stop mode parks instead of moving on; a build in scope (allowed generated
// files included) moves on, its state saying so.
func TestScopeScannerFinalScan(t *testing.T) {
	// No tick comes during these runs: only the last look can see.
	// (Not parallel: no other test's scanner starts meanwhile.)
	defer func(old time.Duration) { scanEvery = old }(scanEvery)
	scanEvery = time.Hour
	t.Run("stop", func(t *testing.T) {
		g := newScopeRig(t)
		_, out := g.run(t, Job{Scope: &model.Scope{Patterns: []string{"src/*.go"}}, StopOnViolation: true}, `echo x > main.go`)
		if o := <-out; o.Plan != "blocked/x.md" || o.Code != -1 || !strings.Contains(o.Note, "main.go") {
			t.Fatalf("outcome %+v", o)
		}
	})
	t.Run("in scope", func(t *testing.T) {
		g := newScopeRig(t)
		scope := &model.Scope{Patterns: []string{"src/*.go"}, Allowed: []string{"gen/**"}}
		_, out := g.run(t, Job{Scope: scope, StopOnViolation: true}, `mkdir -p src gen/pb && echo x > src/a.go && echo y > gen/pb/a.pb.go && echo e > .env.fleetwatch && git add src gen && `+gitCommit)
		if o := <-out; !o.OK() || o.Plan != "review-needed/x.md" {
			t.Fatalf("outcome %+v", o)
		}
		if st := g.state(t); st.Scope != "in scope (2 files)" || len(st.Violations) != 0 {
			t.Errorf("state %+v", st)
		}
		if evs := g.events(t, "scope-violation"); len(evs) != 0 {
			t.Errorf("events %+v", evs)
		}
	})
}

// A build without a scope says so while it runs.
func TestScopeScannerNoScopeSaysSo(t *testing.T) {
	t.Parallel()
	g := newScopeRig(t)
	_, out := g.run(t, Job{}, `sleep 1.5`)
	g.waitState(t, "the scope word", func(st look.State) bool { return st.Scope == "no scope check" })
	<-out
}

// Touched is capped at MaxTouched, the rest counted; the state file is
// written only when something changed.
func TestScopeScannerCapsTouched(t *testing.T) {
	t.Parallel()
	g := newScopeRig(t)
	for i := range look.MaxTouched + 7 {
		os.WriteFile(filepath.Join(g.wt, fmt.Sprintf("f%04d", i)), nil, 0o644)
	}
	d := &Driver{Tree: g.tree, Worker: model.Worker{AgentID: "w1"}}
	if err := d.Start(nil); err != nil {
		t.Fatal(err)
	}
	defer d.Finish(0, "test")
	r := &running{job: Job{Rel: g.rel, Worktree: g.wt, Base: "dev", Scope: &model.Scope{Patterns: []string{"f*"}}}, me: planfs.Actor{AgentID: "w1"}}
	s := d.newScanner(r)
	defer s.close()
	if _, ok := d.scanOnce(r, s); !ok {
		t.Fatal("scan failed")
	}
	st := g.state(t)
	if len(st.Touched) != look.MaxTouched || st.TouchedMore != 7 || st.Scope != fmt.Sprintf("in scope (%d files)", look.MaxTouched+7) {
		t.Errorf("touched %d, more %d, scope %q", len(st.Touched), st.TouchedMore, st.Scope)
	}
	fi, _ := os.Stat(look.StatePath(g.dir, "w1"))
	time.Sleep(20 * time.Millisecond)
	d.scanOnce(r, s)
	if fi2, _ := os.Stat(look.StatePath(g.dir, "w1")); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Errorf("an unchanged scan rewrote the state file")
	}
}

func TestStatusPaths(t *testing.T) {
	out := strings.Join([]string{
		"1 .M N... 100644 100644 100644 abc abc src/a b.go",
		"1 A. N... 000000 100644 100644 000 abc new.go",
		"2 R. N... 100644 100644 100644 abc abc R100 to.go", "from.go",
		"u UU N... 100644 100644 100644 100644 a b c both.go",
		"? untracked dir/x y",
		"! ignored.o",
		"",
	}, "\x00")
	want := []string{"src/a b.go", "new.go", "from.go", "to.go", "both.go", "untracked dir/x y"}
	if got := statusPaths(out); !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// What git's look misses, the scanner still sees: a file the agent created
// and deleted between two scans, and one git ignores. Both are writes the
// build made, out of its scope here.
func TestScopeScannerSeesWritesGitDoesNot(t *testing.T) {
	t.Parallel()
	g := newScopeRig(t)
	if err := os.WriteFile(filepath.Join(g.wt, ".gitignore"), []byte("*.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testkit.Git(t, g.wt, "add", ".gitignore")
	testkit.Git(t, g.wt, "-c", "user.name=a", "-c", "user.email=a@example.com", "commit", "-q", "-m", "ignore logs")
	scope := &model.Scope{Patterns: []string{"src/"}}
	_, out := g.run(t, Job{Scope: scope}, `mkdir -p src && echo a > src/a.go && echo x > stray.txt && rm stray.txt && echo l > build.log && sleep 30`)
	// .gitignore is the branch's own commit, out of scope too.
	g.waitState(t, "the violations", func(st look.State) bool { return len(st.Violations) == 3 })
	st := g.state(t)
	if want := []string{".gitignore", "build.log", "src/a.go", "stray.txt"}; !slices.Equal(st.Touched, want) {
		t.Errorf("touched %q, want %q", st.Touched, want)
	}
	if want := []string{".gitignore", "build.log", "stray.txt"}; !slices.Equal(st.Violations, want) {
		t.Errorf("violations %q, want %q", st.Violations, want)
	}
	select {
	case o := <-out:
		t.Fatalf("warn mode stopped the agent: %+v", o)
	default:
	}
}
