package realagenttest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/modelapi"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// claudeHome is a home folder of its own, with the state the preset grants
// Claude Code.
func claudeHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// The real Claude Code, contained (Landlock with the network closed but
// for the driver's ports, no capability, a session of its own, a bounded
// cgroup), as root and as a user: it runs its Bash tool, commits in its
// worktree, the driver brings the commit in, and the metering proxy counts
// exactly what the API sent — with the endpoint's base_url, and without
// one (metered by default: the proxy stands in front of the preset's API,
// here the operator's own ANTHROPIC_BASE_URL).
func TestClaudeCodeWorksContained(t *testing.T) {
	fwtest.NeedLandlock(t, 4)
	claude := fwtest.RealAgent(t, "claude")
	for _, u := range fwtest.Users(t) {
		for _, byDefault := range []bool{false, true} {
			name := u.Label() + "/base_url"
			if byDefault {
				name = u.Label() + "/metered_by_default"
			}
			t.Run(name, func(t *testing.T) { claudeBuilds(t, claude, u, byDefault) })
		}
	}
}

func claudeBuilds(t *testing.T, claude string, u *fwtest.User, byDefault bool) {
	api, err := modelapi.Start(modelapi.Script{Steps: []modelapi.Step{
		{Shell: "echo hello from claude > hello.txt && git add hello.txt && " +
			"git -c user.name=claude -c user.email=claude@example.com commit -qm 'claude: hello' && echo committed"},
		{Text: "## Result\ncommitted hello.txt"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/hello.md"})
	endpoints := "endpoints:\n  - name: cc\n    tier: mid\n    model: claude-sonnet-4-5\n    agent: claude\n"
	env := []string{
		"HOME=" + claudeHome(t), "PATH=" + filepath.Dir(claude) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"ANTHROPIC_API_KEY=sk-ant-test",
	}
	if byDefault {
		env = append(env, "ANTHROPIC_BASE_URL="+api.URL)
	} else {
		endpoints += "    base_url: " + api.URL + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "endpoints.yaml"), []byte(endpoints), 0o644); err != nil {
		t.Fatal(err)
	}
	r := fwtest.RunAs(t, u, dir, env, "work-once", "--run", "--ensure-worktree", "--endpoint", "cc", "--agent-id", "cc1", "--slug", "hello")
	log, _ := os.ReadFile(look.LogPath(dir, "cc1"))
	if r.Code != 0 {
		t.Fatalf("the run: %v\nlog:\n%s", r, log)
	}
	// A user other than root may make no cgroup here: the driver says so
	// and tracks the run's processes instead.
	group := "the run's cgroup: "
	if u != nil {
		group = "no cgroup for the agent"
	}
	for _, want := range []string{
		"agents are contained (Landlock ABI", "network only through the driver", group,
		"agent exited 0; review-needed/hello.md waits for review",
		"spent " + strconv.FormatInt(api.Usage().Tokens(), 10) + " tokens", "(metered)",
	} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	if msg := fwtest.GitOut(t, dir, "log", "-1", "--format=%s", "refs/heads/feature/hello"); msg != "claude: hello" {
		t.Errorf("feature/hello's tip is %q, want Claude Code's commit; log:\n%s", msg, log)
	}
	if got := fwtest.GitOut(t, dir, "show", "refs/heads/feature/hello:hello.txt"); got != "hello from claude" {
		t.Errorf("hello.txt on the branch: %q", got)
	}
}
