package realagenttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/modelapi"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// A plan sent back for more work resumes the real Claude Code's session:
// the next build on the endpoint runs `claude --resume` with the session
// the first one left, the API sees the conversation go on (the script's
// third step, not its first), and the second commit lands on the branch.
func TestClaudeCodeResumesItsSession(t *testing.T) {
	fwtest.NeedLandlock(t, 4)
	claude := fwtest.RealAgent(t, "claude")
	commit := func(file string) string {
		return "echo " + file + " > " + file + " && git add " + file + " && git -c user.name=claude -c user.email=claude@example.com commit -qm 'claude: " + file + "'"
	}
	api, err := modelapi.Start(modelapi.Script{Steps: []modelapi.Step{
		{Shell: commit("one.txt")}, {Text: "## Result\none"},
		{Shell: commit("two.txt")}, {Text: "## Result\ntwo"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/r.md"})
	endpoints := "endpoints:\n  - name: cc\n    tier: mid\n    model: claude-sonnet-4-5\n    agent: claude\n    base_url: " + api.URL + "\n"
	if err := os.WriteFile(filepath.Join(dir, "endpoints.yaml"), []byte(endpoints), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + claudeHome(t), "ANTHROPIC_API_KEY=sk-ant-test",
		"PATH=" + filepath.Dir(claude) + string(os.PathListSeparator) + os.Getenv("PATH")}
	build := func() string {
		t.Helper()
		r := fwtest.RunEnv(t, dir, env, "work-once", "--run", "--ensure-worktree", "--endpoint", "cc", "--agent-id", "cc1", "--slug", "r")
		log, _ := os.ReadFile(look.LogPath(dir, "cc1"))
		if r.Code != 0 {
			t.Fatalf("the build: %v\nlog:\n%s", r, log)
		}
		return string(log)
	}
	build()
	first, ok := look.LastSession(dir, "r")
	if !ok || first.Endpoint != "cc" {
		t.Fatalf("the first build left no session: %+v", first)
	}
	fwtest.Want(t, fwtest.Run(t, dir, "review", "r", "--needs-work", "add two.txt"), 0)
	if log := build(); !strings.Contains(log, "resuming session "+first.ID) || !strings.Contains(log, "--resume "+first.ID) {
		t.Errorf("the second build did not resume %s:\n%s", first.ID, log)
	}
	if got := fwtest.GitOut(t, dir, "log", "--format=%s", "dev..refs/heads/feature/r"); got != "claude: two.txt\nclaude: one.txt" {
		t.Errorf("feature/r holds %q", got)
	}
	var steps []int
	for _, c := range api.Calls() {
		if c.Step >= 0 {
			steps = append(steps, c.Step)
		}
	}
	if len(steps) != 4 || steps[2] != 2 || steps[3] != 3 {
		t.Errorf("the API's scripted calls went to steps %v, want 0 1 2 3", steps)
	}
}
