package realgeminitest

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/modelapi"
	"github.com/fleetwatch/fleetwatch/internal/systest/landkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// The real Gemini CLI reviews a change with the preset's review argv: it
// runs git diff, a shell command a review is allowed; its write is denied
// by its own policy (a review that wrote would be refused); and its
// verdict, first on stdout, is read.
func TestGeminiCLIReviews(t *testing.T) {
	t.Parallel()
	fwtest.NeedLandlock(t, 4)
	gemini := fwtest.RealAgent(t, "gemini")
	api := fwtest.ScriptedAPI(t,
		modelapi.Step{Shell: "git diff dev HEAD --stat"},
		modelapi.Step{Shell: "echo changed > x.txt"},
		modelapi.Step{Text: "ACCEPT\nx.txt is added as the plan asks."},
	)
	dir := landkit.LandProject(t, "")
	tip := landkit.Feature(t, dir, "x", map[string]string{"x.txt": "x\n"})
	landkit.Write(t, dir, "endpoints.yaml", endpoint("    base_url: "+api.URL+"\n"))
	r := fwtest.RunEnv(t, dir, geminiEnv(gemini, geminiHome(t, nil)), "review", "x", "--peer", "--endpoint", "g")
	log := landkit.ReadFile(t, dir, "var/fleet/logs/review-x.log")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "peer review by ") || !strings.Contains(r.Stdout, ": ACCEPT (") {
		t.Fatalf("the review: %v\nlog:\n%s", r, log)
	}
	if text := landkit.ReadFile(t, dir, ".plans/reviews/x/"+tip+".md"); !strings.Contains(text, "- **Verdict:** ACCEPT\n") {
		t.Errorf("the review file:\n%s", text)
	}
	calls := api.Calls()
	if len(calls) != 3 || calls[2].Step != 2 {
		t.Errorf("the review's calls (each tool call answered): %+v", calls)
	}
}

// The real Gemini CLI's plan turn on a plan_first endpoint writes its
// proposal where the driver says ($FLEET_PROPOSAL, outside the project)
// with its shell tool, and the proposal reaches the inbox, awaiting
// approval, with the scope it names.
func TestGeminiCLIPlanTurn(t *testing.T) {
	t.Parallel()
	fwtest.NeedLandlock(t, 4)
	gemini := fwtest.RealAgent(t, "gemini")
	api := fwtest.ScriptedAPI(t,
		modelapi.Step{Shell: `printf '# Plan\nAdd hello.txt.\n\n## Files in scope\n- hello.txt\n' > "$FLEET_PROPOSAL" && echo written`},
		modelapi.Step{Text: "## Result\nproposal written"},
	)
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/hello.md"})
	landkit.Write(t, dir, "endpoints.yaml", endpoint("    plan_first: true\n    base_url: "+api.URL+"\n"))
	r := fwtest.RunEnv(t, dir, geminiEnv(gemini, geminiHome(t, nil)), "work-once", "--run", "--ensure-worktree", "--endpoint", "g", "--agent-id", "g1", "--slug", "hello")
	log, _ := os.ReadFile(look.LogPath(dir, "g1"))
	if r.Code != 0 {
		t.Fatalf("the plan turn: %v\nlog:\n%s", r, log)
	}
	var inbox []struct {
		Slug, State, AgentID string
		Scope                []string
	}
	in := fwtest.Run(t, dir, "inbox", "--json")
	if err := json.Unmarshal([]byte(in.Stdout), &inbox); err != nil || len(inbox) != 1 {
		t.Fatalf("inbox --json: %v %v\nlog:\n%s", in, err, log)
	}
	if e := inbox[0]; e.Slug != "hello" || e.State != "awaiting approval" || strings.Join(e.Scope, ",") != "hello.txt" {
		t.Errorf("the inbox entry: %+v\nlog:\n%s", e, log)
	}
	if !strings.Contains(string(log), "(metered)") {
		t.Errorf("the plan turn was not metered:\n%s", log)
	}
}
