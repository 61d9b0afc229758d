package realqwentest

import (
	"os"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/agentout"
	"github.com/fleetwatch/fleetwatch/internal/modelapi"
	"github.com/fleetwatch/fleetwatch/internal/testkit/agentkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// The real qwen-code (on Node 20, though it asks for 22), contained, as
// root and as a user, with the endpoint's base_url and without one
// (metered by default, in front of the operator's OPENAI_BASE_URL): its
// shell tool commits over Chat Completions, the driver brings the commit
// in, and the metering proxy counts exactly what the API sent.
func TestQwenBuildsContained(t *testing.T) {
	t.Parallel()
	fwtest.NeedLandlock(t, 4)
	bin := fwtest.RealAgent(t, "qwen")
	for _, u := range fwtest.Users(t) {
		for _, byDefault := range []bool{false, true} {
			name := u.Label() + "/base_url"
			if byDefault {
				name = u.Label() + "/metered_by_default"
			}
			t.Run(name, func(t *testing.T) { qwenBuilds(t, bin, u, byDefault) })
		}
	}
}

func qwenBuilds(t *testing.T, bin string, u *fwtest.User, byDefault bool) {
	api := fwtest.ScriptedAPI(t, agentkit.CommitStep("qwen", "hello.txt"), modelapi.Step{Text: "## Result\ncommitted hello.txt"})
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/hello.md"})
	endpoints := "endpoints:\n  - name: qw\n    tier: mid\n    model: qwen3-coder-plus\n    agent: qwen\n"
	env := agentkit.HomeFor(t, "qwen", bin, "OPENAI_API_KEY=sk-test")
	if byDefault {
		env = append(env, "OPENAI_BASE_URL="+api.URL+"/v1")
	} else {
		endpoints += "    base_url: " + api.URL + "/v1\n"
	}
	agentkit.WriteFile(t, dir, "endpoints.yaml", endpoints)
	r := fwtest.RunAs(t, u, dir, env, "work-once", "--run", "--ensure-worktree", "--endpoint", "qw", "--agent-id", "qw1", "--slug", "hello")
	log, _ := os.ReadFile(look.LogPath(dir, "qw1"))
	if r.Code != 0 {
		t.Fatalf("the run: %v\nlog:\n%s", r, log)
	}
	for _, want := range []string{
		"agents are contained (Landlock ABI", "agent exited 0; review-needed/hello.md waits for review",
	} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	agentkit.WantMetered(t, log, api)
	if msg := fwtest.GitOut(t, dir, "log", "-1", "--format=%s", "refs/heads/feature/hello"); msg != "qwen: hello" {
		t.Errorf("feature/hello's tip is %q, want qwen-code's commit; log:\n%s", msg, log)
	}
}

// A peer review by the real qwen-code, contained: its verdict, the first
// line of its text output, is recorded.
func TestQwenReviews(t *testing.T) {
	t.Parallel()
	fwtest.NeedLandlock(t, 4)
	agentkit.PeerReview(t, "qwen", fwtest.RealAgent(t, "qwen"), "OPENAI_API_KEY=sk-test")
}

// A plan-first turn by the real qwen-code, contained: its proposal reaches
// the inbox.
func TestQwenPlans(t *testing.T) {
	t.Parallel()
	fwtest.NeedLandlock(t, 4)
	agentkit.PlanTurn(t, "qwen", fwtest.RealAgent(t, "qwen"), "OPENAI_API_KEY=sk-test")
}

// What the real qwen-code prints of a refused key, read by agentout, and
// the session its resume argv continues. (A 429 it retries ten times,
// from a minute apart doubling to five: no test waits for it to give up.)
func TestQwenOutputRead(t *testing.T) {
	t.Parallel()
	bin := fwtest.RealAgent(t, "qwen")
	env := agentkit.HomeFor(t, "qwen", bin, "OPENAI_API_KEY=sk-test")
	t.Run("auth", func(t *testing.T) {
		api := fwtest.ScriptedAPI(t, modelapi.Step{Shell: "true", Fault: &modelapi.Fault{Kind: modelapi.AuthFailed}})
		r := agentout.Of("qwen", agentkit.RunPreset(t, bin, "qwen", "build", fwtest.GitProject(t), api.URL+"/v1", "", env))
		if !r.Failed || r.Trouble != agentout.AuthFailed || r.Status != 401 || r.Session == "" {
			t.Errorf("a refused key: %+v", r)
		}
	})
	t.Run("resume", func(t *testing.T) {
		api := fwtest.ScriptedAPI(t, modelapi.Step{Shell: "echo one"}, modelapi.Step{Text: "## Result\nfirst turn"}, modelapi.Step{Text: "## Result\nresumed"})
		dir := fwtest.GitProject(t)
		first := agentout.Of("qwen", agentkit.RunPreset(t, bin, "qwen", "build", dir, api.URL+"/v1", "", env))
		if first.Failed || !look.ValidSession(first.Session) {
			t.Fatalf("the first turn: %+v", first)
		}
		out := agentkit.RunPreset(t, bin, "qwen", "resume", dir, api.URL+"/v1", first.Session, env)
		if again := agentout.Of("qwen", out); again.Session != first.Session || !strings.Contains(string(out), `"result":"## Result\nresumed"`) {
			t.Errorf("the resumed turn %+v is not the first's %s:\n%s", again, first.Session, agentkit.Clipped(out))
		}
	})
}
