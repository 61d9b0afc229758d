package realgeminitest

import (
	"os"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/modelapi"
	"github.com/fleetwatch/fleetwatch/internal/systest/landkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// A plan sent back for more work resumes the real Gemini CLI's session
// (the id its stream-json printed, given to --resume): the conversation
// goes on at the script's next step instead of starting over.
func TestGeminiCLIResumesItsSession(t *testing.T) {
	t.Parallel()
	fwtest.NeedLandlock(t, 4)
	gemini := fwtest.RealAgent(t, "gemini")
	api := fwtest.ScriptedAPI(t,
		modelapi.Step{Shell: "echo hello > hello.txt && git add hello.txt && git -c user.name=gemini -c user.email=gemini@example.com commit -qm 'gemini: hello'"},
		modelapi.Step{Text: "## Result\ncommitted hello.txt"},
		modelapi.Step{Shell: "echo more >> hello.txt && git -c user.name=gemini -c user.email=gemini@example.com commit -qam 'gemini: more'"},
		modelapi.Step{Text: "## Result\nadded more"},
	)
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/hello.md"})
	landkit.Write(t, dir, "endpoints.yaml", endpoint("    base_url: "+api.URL+"\n"))
	env := geminiEnv(gemini, geminiHome(t, nil))
	work := func() string {
		r := fwtest.RunEnv(t, dir, env, "work-once", "--run", "--ensure-worktree", "--endpoint", "g", "--agent-id", "g1", "--slug", "hello")
		log, _ := os.ReadFile(look.LogPath(dir, "g1"))
		if r.Code != 0 {
			t.Fatalf("the run: %v\nlog:\n%s", r, log)
		}
		return string(log)
	}
	work()
	s, ok := look.LastSession(dir, "hello")
	if !ok || len(s.ID) != 36 || s.Endpoint != "g" {
		t.Fatalf("the session recorded: %+v %v", s, ok)
	}
	if r := fwtest.Run(t, dir, "review", "hello", "--needs-work", "add more"); r.Code != 0 {
		t.Fatalf("needs-work: %v", r)
	}
	log := work()
	if !strings.Contains(log, "resuming session "+s.ID) || !strings.Contains(log, "--resume "+s.ID) {
		t.Errorf("the second run did not resume %s:\n%s", s.ID, log)
	}
	if msg := fwtest.GitOut(t, dir, "log", "-1", "--format=%s", "refs/heads/feature/hello"); msg != "gemini: more" {
		t.Errorf("feature/hello's tip is %q, want the resumed conversation's commit; log:\n%s", msg, log)
	}
}
