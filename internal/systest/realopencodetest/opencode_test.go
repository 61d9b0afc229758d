package realopencodetest

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/agentout"
	"github.com/fleetwatch/fleetwatch/internal/modelapi"
	"github.com/fleetwatch/fleetwatch/internal/testkit/agentkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// The real opencode, contained, as root and as a user, with the endpoint's
// base_url and without one (metered by default: the proxy stands in front
// of the operator's own ANTHROPIC_BASE_URL, which opencode reads with the
// API's version in it): its bash tool commits, the driver brings the
// commit in, and the metering proxy counts exactly what the API sent.
func TestOpencodeBuildsContained(t *testing.T) {
	t.Parallel()
	fwtest.NeedLandlock(t, 4)
	bin := fwtest.RealAgent(t, "opencode")
	for _, u := range fwtest.Users(t) {
		for _, byDefault := range []bool{false, true} {
			name := u.Label() + "/base_url"
			if byDefault {
				name = u.Label() + "/metered_by_default"
			}
			t.Run(name, func(t *testing.T) { opencodeBuilds(t, bin, u, byDefault) })
		}
	}
}

func opencodeBuilds(t *testing.T, bin string, u *fwtest.User, byDefault bool) {
	api := fwtest.ScriptedAPI(t, agentkit.CommitStep("opencode", "hello.txt"), modelapi.Step{Text: "## Result\ncommitted hello.txt"})
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/hello.md"})
	endpoints := "endpoints:\n  - name: oc\n    tier: mid\n    model: anthropic/claude-sonnet-4-5\n    agent: opencode\n"
	env := agentkit.HomeFor(t, "opencode", bin, "ANTHROPIC_API_KEY=sk-ant-test")
	if byDefault {
		env = append(env, "ANTHROPIC_BASE_URL="+api.URL+"/v1")
	} else {
		endpoints += "    base_url: " + api.URL + "/v1\n"
	}
	agentkit.WriteFile(t, dir, "endpoints.yaml", endpoints)
	r := fwtest.RunAs(t, u, dir, env, "work-once", "--run", "--ensure-worktree", "--endpoint", "oc", "--agent-id", "oc1", "--slug", "hello")
	log, _ := os.ReadFile(look.LogPath(dir, "oc1"))
	if r.Code != 0 {
		t.Fatalf("the run: %v\nlog:\n%s", r, log)
	}
	for _, want := range []string{
		"agents are contained (Landlock ABI", "network only through the driver",
		"agent exited 0; review-needed/hello.md waits for review",
	} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	agentkit.WantMetered(t, log, api)
	if msg := fwtest.GitOut(t, dir, "log", "-1", "--format=%s", "refs/heads/feature/hello"); msg != "opencode: hello" {
		t.Errorf("feature/hello's tip is %q, want opencode's commit; log:\n%s", msg, log)
	}
	if got := fwtest.GitOut(t, dir, "show", "refs/heads/feature/hello:hello.txt"); got != "hello from opencode" {
		t.Errorf("hello.txt on the branch: %q", got)
	}
	for _, c := range api.Calls() {
		if c.Auth != "sk-ant-test" {
			t.Errorf("a call to %s carried %q, not the operator's key", c.Path, c.Auth)
		}
	}
}

// A peer review by the real opencode, contained: its verdict, the first
// line of its plain stdout, is recorded.
func TestOpencodeReviews(t *testing.T) {
	t.Parallel()
	fwtest.NeedLandlock(t, 4)
	agentkit.PeerReview(t, "opencode", fwtest.RealAgent(t, "opencode"), "ANTHROPIC_API_KEY=sk-ant-test")
}

// A plan-first turn by the real opencode, contained: its proposal reaches
// the inbox.
func TestOpencodePlans(t *testing.T) {
	t.Parallel()
	fwtest.NeedLandlock(t, 4)
	agentkit.PlanTurn(t, "opencode", fwtest.RealAgent(t, "opencode"), "ANTHROPIC_API_KEY=sk-ant-test")
}

// What the real opencode prints of an API's faults, read by agentout: a
// refused key, and a rate limit it gave up on after its own retries (each
// waiting the retry-after); and the session a finished run names, which
// the preset's resume argv continues.
func TestOpencodeOutputRead(t *testing.T) {
	t.Parallel()
	bin := fwtest.RealAgent(t, "opencode")
	env := agentkit.HomeFor(t, "opencode", bin, "ANTHROPIC_API_KEY=sk-ant-test")
	t.Run("auth", func(t *testing.T) {
		api := fwtest.ScriptedAPI(t, modelapi.Step{Shell: "true", Fault: &modelapi.Fault{Kind: modelapi.AuthFailed}})
		r := agentout.Of("opencode", agentkit.RunPreset(t, bin, "opencode", "build", fwtest.GitProject(t), api.URL+"/v1", "", env))
		if !r.Failed || r.Trouble != agentout.AuthFailed || r.Status != 401 || r.Session == "" {
			t.Errorf("a refused key: %+v", r)
		}
	})
	t.Run("rate_limited", func(t *testing.T) {
		api := fwtest.ScriptedAPI(t, modelapi.Step{Shell: "true", Fault: &modelapi.Fault{Kind: modelapi.RateLimited, RetryAfter: time.Second}})
		r := agentout.Of("opencode", agentkit.RunPreset(t, bin, "opencode", "build", fwtest.GitProject(t), api.URL+"/v1", "", env))
		if !r.Failed || r.Trouble != agentout.RateLimited || r.Status != 429 || r.RetryAfter != time.Second {
			t.Errorf("a rate limit: %+v", r)
		}
	})
	t.Run("resume", func(t *testing.T) {
		api := fwtest.ScriptedAPI(t, modelapi.Step{Shell: "echo one"}, modelapi.Step{Text: "## Result\nfirst turn"}, modelapi.Step{Text: "## Result\nresumed"})
		dir := fwtest.GitProject(t)
		first := agentout.Of("opencode", agentkit.RunPreset(t, bin, "opencode", "build", dir, api.URL+"/v1", "", env))
		if first.Failed || !look.ValidSession(first.Session) {
			t.Fatalf("the first turn: %+v", first)
		}
		out := agentkit.RunPreset(t, bin, "opencode", "resume", dir, api.URL+"/v1", first.Session, env)
		if again := agentout.Of("opencode", out); again.Session != first.Session || !strings.Contains(string(out), `"text":"## Result\nresumed"`) {
			t.Errorf("the resumed turn %+v is not the first's %s:\n%s", again, first.Session, agentkit.Clipped(out))
		}
	})
}
