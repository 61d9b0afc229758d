package realagenttest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/modelapi"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// A plan's budget acts on a real Claude Code run whose endpoint names no
// base_url: the run is metered by default, paused when the API's own
// figures reach the budget, and a stop then parks the plan in blocked/
// (before, only base_url endpoints were metered, and a subscription
// run's report did nothing).
func TestBudgetStopsARealRunWithoutBaseURL(t *testing.T) {
	fwtest.NeedLandlock(t, 4)
	claude := fwtest.RealAgent(t, "claude")
	api, err := modelapi.Start(modelapi.Script{Steps: []modelapi.Step{
		{Shell: "echo one > one.txt", Input: 1500, Output: 100},
		{Shell: "echo two > two.txt"},
		{Text: "## Result\nnever reached"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/costly.md", Fields: "Budget: 1k tokens"})
	endpoints := "endpoints:\n  - name: cc\n    tier: mid\n    model: claude-sonnet-4-5\n    agent: claude\n"
	if err := os.WriteFile(filepath.Join(dir, "endpoints.yaml"), []byte(endpoints), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + claudeHome(t), "ANTHROPIC_API_KEY=sk-ant-test", "ANTHROPIC_BASE_URL=" + api.URL,
		"PATH=" + filepath.Dir(claude) + string(os.PathListSeparator) + os.Getenv("PATH")}
	cmd := fwtest.Cmd(dir, env, "work-once", "--run", "--ensure-worktree", "--endpoint", "cc", "--agent-id", "cc1", "--slug", "costly")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	logOf := func() string { b, _ := os.ReadFile(look.LogPath(dir, "cc1")); return string(b) }
	fwtest.WaitFor(t, "the run to pause at its budget", 60*time.Second, func() bool {
		return strings.Contains(logOf(), "budget reached: the plan's budget (1k tokens) spent")
	})
	if r := fwtest.Run(t, dir, "worker", "stop", "cc1", "--root", dir); r.Code != 0 {
		t.Fatalf("stop: %v", r)
	}
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the stopped driver did not end:\n%s", logOf())
	}
	if !fwtest.Exists(dir, "blocked/costly.md") {
		t.Errorf("the plan is not parked in blocked/:\n%s\n%s", out.String(), logOf())
	}
	if calls := api.Calls(); len(calls) == 0 || calls[len(calls)-1].Step > 1 {
		t.Errorf("the paused run went on calling the API: %+v", calls)
	}
}
