package realgeminitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/modelapi"
	"github.com/fleetwatch/fleetwatch/internal/systest/landkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// geminiHome is a home folder of its own with the settings an API-key
// user of Gemini CLI has: the auth type chosen (with none, 0.61.0 takes
// a set GOOGLE_GEMINI_BASE_URL for a "gateway" login its headless runs
// refuse, exit 41), no usage statistics, no update checks; general holds
// more of its general settings.
func geminiHome(t *testing.T, general map[string]any) string {
	t.Helper()
	home := t.TempDir()
	settings := map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"general":  map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
	}
	for k, v := range general {
		settings["general"].(map[string]any)[k] = v
	}
	b, _ := json.Marshal(settings)
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// geminiEnv is the environment fleetwatch runs with: the CLI on PATH, an
// API key, its home.
func geminiEnv(bin, home string) []string {
	return []string{"HOME=" + home, "PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"), "GEMINI_API_KEY=gemini-test-key"}
}

// endpoint is an endpoint g running the gemini preset, with extra lines.
func endpoint(extra string) string {
	return "endpoints:\n  - name: g\n    tier: mid\n    model: gemini-2.5-pro\n    agent: gemini\n" + extra
}

// The real Gemini CLI, contained, as root and as a user: it runs its
// shell tool, commits in its worktree, the driver brings the commit in,
// and the metering proxy counts exactly what the API sent (usageMetadata,
// streamed) — with the endpoint's base_url, and without one (metered by
// default: the proxy stands in front of the operator's own
// GOOGLE_GEMINI_BASE_URL).
func TestGeminiCLIBuildsContained(t *testing.T) {
	t.Parallel()
	fwtest.NeedLandlock(t, 4)
	gemini := fwtest.RealAgent(t, "gemini")
	for _, u := range fwtest.Users(t) {
		for _, byDefault := range []bool{false, true} {
			name := u.Label() + "/base_url"
			if byDefault {
				name = u.Label() + "/metered_by_default"
			}
			t.Run(name, func(t *testing.T) { geminiBuilds(t, gemini, u, byDefault) })
		}
	}
}

func geminiBuilds(t *testing.T, gemini string, u *fwtest.User, byDefault bool) {
	api := fwtest.ScriptedAPI(t,
		modelapi.Step{Shell: "echo hello from gemini > hello.txt && git add hello.txt && " +
			"git -c user.name=gemini -c user.email=gemini@example.com commit -qm 'gemini: hello' && echo committed", Input: 123, Output: 45},
		modelapi.Step{Text: "## Result\ncommitted hello.txt", Input: 130, Output: 12},
	)
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/hello.md"})
	endpoints := endpoint("")
	// Metered by default, the user is new to Gemini CLI: no settings of
	// its own, so the preset's system defaults choose the key's login.
	home := geminiHome(t, nil)
	if byDefault {
		home = t.TempDir()
	}
	env := geminiEnv(gemini, home)
	if byDefault {
		env = append(env, "GOOGLE_GEMINI_BASE_URL="+api.URL)
	} else {
		endpoints += "    base_url: " + api.URL + "\n"
	}
	landkit.Write(t, dir, "endpoints.yaml", endpoints)
	r := fwtest.RunAs(t, u, dir, env, "work-once", "--run", "--ensure-worktree", "--endpoint", "g", "--agent-id", "g1", "--slug", "hello")
	log, _ := os.ReadFile(look.LogPath(dir, "g1"))
	if r.Code != 0 {
		t.Fatalf("the run: %v\nlog:\n%s", r, log)
	}
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
	if api.Usage().Tokens() != 123+45+130+12 {
		t.Errorf("the API sent %+v: side calls or retries", api.Usage())
	}
	if msg := fwtest.GitOut(t, dir, "log", "-1", "--format=%s", "refs/heads/feature/hello"); msg != "gemini: hello" {
		t.Errorf("feature/hello's tip is %q, want Gemini CLI's commit; log:\n%s", msg, log)
	}
	if got := fwtest.GitOut(t, dir, "show", "refs/heads/feature/hello:hello.txt"); got != "hello from gemini" {
		t.Errorf("hello.txt on the branch: %q", got)
	}
	for _, c := range api.Calls() {
		if c.API != "gemini" || c.Auth != "gemini-test-key" || c.Tool != "run_shell_command" {
			t.Errorf("a call: %+v", c)
		}
	}
}
