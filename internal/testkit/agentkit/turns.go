package agentkit

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/modelapi"
	"github.com/fleetwatch/fleetwatch/internal/systest/landkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/registry"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// EndpointOf is endpoints.yaml with one endpoint "ep" running preset's
// tool at api (with the path its vendor's API takes, OpenAI's /v1), with
// more settings.
func EndpointOf(t *testing.T, dir, preset string, api *modelapi.Server, more string) {
	t.Helper()
	p, _ := registry.PresetNamed(preset)
	base := api.URL
	if u, err := url.Parse(p.Origin); err == nil {
		base += strings.TrimSuffix(u.Path, "/")
	}
	WriteFile(t, dir, "endpoints.yaml", "endpoints:\n  - name: ep\n    tier: mid\n    model: "+p.Model+"\n    agent: "+preset+
		"\n    base_url: "+base+"\n"+more)
}

// PeerReview runs a peer review by preset's tool bin, contained: it reads
// the change with its shell tool, and its verdict, the first line of its
// stdout, is recorded.
func PeerReview(t *testing.T, preset, bin string, env ...string) {
	api := fwtest.ScriptedAPI(t, modelapi.Step{Shell: "git log --oneline -3"}, modelapi.Step{Text: "ACCEPT\nthe change holds"})
	dir := landkit.LandProject(t, "")
	tip := landkit.Feature(t, dir, "x", map[string]string{"x.txt": "x\n"})
	EndpointOf(t, dir, preset, api, "")
	r := fwtest.RunEnv(t, dir, HomeFor(t, preset, bin, env...), "review", "x", "--peer")
	rel := ".plans/reviews/x/" + tip + ".md"
	if r.Code != 0 || r.Stdout != "peer review by review-ep: ACCEPT ("+rel+")\n" {
		t.Fatalf("the review: %v\nits log:\n%s", r, landkit.ReadFile(t, dir, "var/fleet/logs/review-x.log"))
	}
	if text := landkit.ReadFile(t, dir, rel); !strings.Contains(text, "- **Verdict:** ACCEPT\n") || !strings.Contains(text, "the change holds") {
		t.Errorf("the review:\n%s", text)
	}
	if c := api.Calls(); len(c) < 2 || c[len(c)-1].Step != 1 {
		t.Errorf("the reviewer did not run its command and answer: %+v", c)
	}
}

// PlanTurn runs a plan-first turn by preset's tool bin, contained: it
// writes its proposal with its shell tool to the file the driver names,
// outside the worktree, and the proposal reaches the inbox awaiting
// approval, its spend metered.
func PlanTurn(t *testing.T, preset, bin string, env ...string) {
	api := fwtest.ScriptedAPI(t,
		modelapi.Step{Shell: `printf '# Plan\nWrite hello.txt.\n\n## Files in scope\n- hello.txt\n' > "$FLEET_PROPOSAL" && echo written`},
		modelapi.Step{Text: "## Result\nproposal written"})
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/hello.md"})
	EndpointOf(t, dir, preset, api, "    plan_first: true\n")
	r := fwtest.RunEnv(t, dir, HomeFor(t, preset, bin, env...), "work-once", "--run", "--ensure-worktree", "--endpoint", "ep", "--agent-id", "ep1", "--slug", "hello")
	log, _ := os.ReadFile(look.LogPath(dir, "ep1"))
	if r.Code != 0 {
		t.Fatalf("the plan turn: %v\nlog:\n%s", r, log)
	}
	var inbox []struct {
		Slug, State string
		Scope       []string
	}
	in := fwtest.Run(t, dir, "inbox", "--root", dir, "--json")
	if err := json.Unmarshal([]byte(in.Stdout), &inbox); err != nil || len(inbox) != 1 {
		t.Fatalf("inbox --json: %v %v\nlog:\n%s", in, err, log)
	}
	if e := inbox[0]; e.Slug != "hello" || e.State != "awaiting approval" || strings.Join(e.Scope, ",") != "hello.txt" {
		t.Errorf("inbox entry: %+v", e)
	}
	WantMetered(t, log, api)
}

// DoctorLive runs `fleetwatch doctor --live` in a repository whose one
// endpoint "live" runs preset's tool bin, with a fresh home and nothing
// but bin's folder added to PATH (doctor gives the key a placeholder),
// and wants its ok line: the real CLI edited, committed, was metered as
// the API counted, and exited 0.
func DoctorLive(t *testing.T, preset, bin string) {
	t.Helper()
	p, _ := registry.PresetNamed(preset)
	dir := fwtest.GitRepo(t)
	WriteFile(t, dir, "endpoints.yaml", "endpoints:\n  - name: live\n    tier: mid\n    model: "+p.Model+"\n    agent: "+preset+"\n")
	env := []string{"HOME=" + t.TempDir(), "PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")}
	r := fwtest.RunEnv(t, dir, env, "doctor", "--live")
	ok := regexp.MustCompile(`(?m)^ok +live live \(` + regexp.QuoteMeta(preset) + `\): started, edited and committed contained, metered \d+ tokens as the API sent, exited 0 in `)
	if r.Code != 0 || !ok.MatchString(r.Stdout) {
		t.Fatalf("doctor --live with the real %s: %v", p.Program, r)
	}
}
