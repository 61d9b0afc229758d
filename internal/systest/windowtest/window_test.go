package windowtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/modelapi"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// commitStep is a script step in which Claude Code commits name.
func commitStep(name string) modelapi.Step {
	return modelapi.Step{Shell: "echo " + name + " > " + name + ".txt && git add " + name + ".txt && " +
		"git -c user.name=claude -c user.email=claude@example.com commit -qm 'claude: " + name + "'"}
}

// The real Claude Code on endpoint one meets a spent usage window: the
// plan is handed back within seconds and endpoint two does it; endpoint
// one is shut until the window's reset, so a second run on it claims
// nothing and its API hears nothing; after the reset it works again.
func TestUsageWindowHandsThePlanOn(t *testing.T) {
	t.Parallel()
	fwtest.NeedLandlock(t, 4)
	claude := fwtest.RealAgent(t, "claude")
	reset := time.Now().Add(20 * time.Second).Truncate(time.Second)
	window := &modelapi.Fault{Kind: modelapi.UsageWindow, Reset: reset}
	one, err := modelapi.Start(modelapi.Script{Steps: []modelapi.Step{
		{Shell: commitStep("later").Shell, Fault: window}, {Text: "## Result\ncommitted later.txt"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { one.Close() })
	two, err := modelapi.Start(modelapi.Script{Steps: []modelapi.Step{commitStep("hello"), {Text: "## Result\ncommitted hello.txt"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { two.Close() })
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/hello.md", Fields: "Priority: P0"}, fwtest.Plan{Rel: "features/later.md", Fields: "Priority: P2"})
	endpoints := "endpoints:\n" +
		"  - name: one\n    tier: mid\n    model: claude-sonnet-4-5\n    agent: claude\n    base_url: " + one.URL + "\n" +
		"  - name: two\n    tier: mid\n    model: claude-sonnet-4-5\n    agent: claude\n    base_url: " + two.URL + "\n"
	if err := os.WriteFile(filepath.Join(dir, "endpoints.yaml"), []byte(endpoints), 0o644); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Claude Code waits out a retry-after as short as this window's
	// itself, retrying (CLAUDE_CODE_MAX_RETRIES, 10 by default); a real
	// window's reset is hours ahead and it exits at once, as here.
	env := []string{"HOME=" + home, "PATH=" + filepath.Dir(claude) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"ANTHROPIC_API_KEY=sk-ant-test", "CLAUDE_CODE_MAX_RETRIES=0"}
	work := func(endpoint, agent, slug string) fwtest.Result {
		return fwtest.RunEnv(t, dir, env, "work-once", "--run", "--ensure-worktree", "--endpoint", endpoint, "--agent-id", agent, "--slug", slug)
	}

	start := time.Now()
	r := work("one", "w1", "hello")
	log, _ := os.ReadFile(look.LogPath(dir, "w1"))
	if took := time.Since(start); r.Code != fwtest.ExitError || !fwtest.Exists(dir, "features/hello.md") || took > 20*time.Second {
		t.Fatalf("the run on one should hand hello back at once (took %v): %v\nlog:\n%s", took, r, log)
	}
	for _, want := range []string{"endpoint trouble (usage_window)", "endpoint one is shut until " + reset.UTC().Format(time.RFC3339), "released in-progress/hello.md to features/hello.md"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("w1's log lacks %q:\n%s", want, log)
		}
	}
	t.Logf("the run on one handed hello back %v after it began", time.Since(start).Round(time.Millisecond))
	st, ok := look.ReadEndpoint(dir, "one")
	if !ok || st.State != look.EndpointShut || !st.Until.Equal(reset) {
		t.Errorf("endpoint one's state: %+v %v", st, ok)
	}

	calls := len(one.Calls())
	r = work("one", "w1", "later")
	if r.Code != fwtest.ExitNothing || !strings.Contains(r.Stderr, "endpoint one is shut until") || !fwtest.Exists(dir, "features/later.md") {
		t.Errorf("a run on the shut endpoint should claim nothing, saying why: %v", r)
	}
	if n := len(one.Calls()); n != calls {
		t.Errorf("the shut endpoint's API heard %d more calls", n-calls)
	}

	if r := work("two", "w2", "hello"); r.Code != 0 || !fwtest.Exists(dir, "review-needed/hello.md") {
		log, _ := os.ReadFile(look.LogPath(dir, "w2"))
		t.Fatalf("endpoint two should do hello: %v\nlog:\n%s", r, log)
	}
	t.Logf("endpoint two had done hello %v after the first run began", time.Since(start).Round(time.Millisecond))

	time.Sleep(time.Until(reset) + 500*time.Millisecond)
	if r := work("one", "w1", "later"); r.Code != 0 || !fwtest.Exists(dir, "review-needed/later.md") {
		log, _ := os.ReadFile(look.LogPath(dir, "w1"))
		t.Fatalf("after the reset, one should work again: %v\nlog:\n%s", r, log)
	}
	if _, ok := look.ReadEndpoint(dir, "one"); ok {
		t.Error("a run that ended well should clear the endpoint's state")
	}
}

// A task that fails is handed back each time, not held for its lease,
// with its count; the third failure parks it in blocked/.
func TestTaskFailuresParkThePlan(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-exit", "1")
	for i := 1; i <= 2; i++ {
		r := fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w1")
		if r.Code != fwtest.ExitError || !fwtest.Exists(dir, "features/a.md") || !strings.Contains(r.Stderr, "task failure "+string(rune('0'+i))+" of 3") {
			t.Fatalf("failure %d: the plan should be handed back at once, counted: %v", i, r)
		}
		if f := look.PlanFailures(dir, "a"); f.Count != i || !strings.Contains(f.Last, "agent exited 1") {
			t.Errorf("failure %d: count %+v", i, f)
		}
	}
	r := fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w1")
	if r.Code != fwtest.ExitError || !fwtest.Exists(dir, "blocked/a.md") || !strings.Contains(r.Stderr, "the task failed 3 times (retries: 3)") {
		t.Fatalf("the third failure should park the plan: %v", r)
	}
	if f := look.PlanFailures(dir, "a"); f.Count != 0 {
		t.Errorf("a parked plan's count should start again: %+v", f)
	}
	// A project's retries: says how many.
	dir = fwtest.NewTree(t, fwtest.Plan{Rel: "features/b.md"})
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-exit", "1")
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("retries: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w1"); !fwtest.Exists(dir, "blocked/b.md") {
		t.Fatalf("retries: 1 parks at the first failure: %v", r)
	}
}
