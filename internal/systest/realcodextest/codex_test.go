package realcodextest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/modelapi"
	"github.com/fleetwatch/fleetwatch/internal/testkit/agentkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// endpoint writes endpoints.yaml: one codex endpoint cx whose base_url
// is s's Responses API (none when s is nil), with more of its lines.
func endpoint(t *testing.T, dir string, s *modelapi.Server, more string) {
	t.Helper()
	yaml := "endpoints:\n  - name: cx\n    tier: mid\n    model: gpt-5-codex\n    agent: codex\n" + more
	if s != nil {
		yaml += "    base_url: " + s.URL + "/v1\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "endpoints.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
}

// codexEnv is a run's environment: a home of its own with the state the
// preset grants (~/.codex), codex on PATH, an API key.
func codexEnv(t *testing.T, codex string) []string {
	t.Helper()
	home := t.TempDir()
	if err := os.Mkdir(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	return []string{"HOME=" + home, "PATH=" + filepath.Dir(codex) + string(os.PathListSeparator) + os.Getenv("PATH"), "OPENAI_API_KEY=sk-test"}
}

// The real Codex, contained (Landlock with the network closed but for the
// driver's ports, no capability, a session of its own), as root and as a
// user: it runs its exec_command tool, commits in its worktree, the
// driver brings the commit in and records its thread as the plan's
// session, and the metering proxy counts exactly what the API sent — with
// the endpoint's base_url, and without one (metered by default: the proxy
// stands in front of the preset's API, here the operator's own
// OPENAI_BASE_URL, which Codex itself would ignore).
func TestCodexBuildsContained(t *testing.T) {
	fwtest.NeedLandlock(t, 4)
	codex := fwtest.RealAgent(t, "codex")
	for _, u := range fwtest.Users(t) {
		t.Run(u.Label()+"/base_url", func(t *testing.T) { codexBuilds(t, codex, u, false) })
		t.Run(u.Label()+"/metered_by_default", func(t *testing.T) { codexBuilds(t, codex, u, true) })
	}
}

func codexBuilds(t *testing.T, codex string, u *fwtest.User, byDefault bool) {
	s := fwtest.ScriptedAPI(t,
		modelapi.Step{Shell: "echo hello from codex > hello.txt && git add hello.txt && " +
			"git -c user.name=codex -c user.email=codex@example.com commit -qm 'codex: hello' && echo committed", Input: 321, Output: 45},
		modelapi.Step{Text: "## Result\ncommitted hello.txt", Input: 400, Output: 12})
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/hello.md"})
	env := codexEnv(t, codex)
	if byDefault {
		endpoint(t, dir, nil, "")
		env = append(env, "OPENAI_BASE_URL="+s.URL+"/v1")
	} else {
		endpoint(t, dir, s, "")
	}
	r := fwtest.RunAs(t, u, dir, env, "work-once", "--run", "--ensure-worktree", "--endpoint", "cx", "--agent-id", "cx1", "--slug", "hello")
	log, _ := os.ReadFile(look.LogPath(dir, "cx1"))
	if r.Code != 0 {
		t.Fatalf("the run: %v\nlog:\n%s", r, log)
	}
	if use := s.Usage(); use.Calls != 2 || use.Tokens() != 321+45+400+12 {
		t.Errorf("the API answered %+v, want the script's two steps", use)
	}
	for _, want := range []string{
		"agents are contained (Landlock ABI", "network only through the driver",
		"agent exited 0; review-needed/hello.md waits for review",
		"spent " + strconv.FormatInt(s.Usage().Tokens(), 10) + " tokens", "(metered)",
	} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	if msg := fwtest.GitOut(t, dir, "log", "-1", "--format=%s", "refs/heads/feature/hello"); msg != "codex: hello" {
		t.Errorf("feature/hello's tip is %q, want Codex's commit; log:\n%s", msg, log)
	}
	if got := fwtest.GitOut(t, dir, "show", "refs/heads/feature/hello:hello.txt"); got != "hello from codex" {
		t.Errorf("hello.txt on the branch: %q", got)
	}
	if sess, ok := look.LastSession(dir, "hello"); !ok || sess.Endpoint != "cx" || len(sess.ID) != 36 {
		t.Errorf("the plan's session: %+v %v, want codex's thread id", sess, ok)
	}
}

// A peer review by the real Codex, inside fleetwatch's sandbox: it looks
// at the change with its shell, and its last message, all its stdout, is
// the verdict the review records.
func TestCodexReviewsContained(t *testing.T) {
	fwtest.NeedLandlock(t, 4)
	codex := fwtest.RealAgent(t, "codex")
	for _, u := range fwtest.Users(t) {
		t.Run(u.Label(), func(t *testing.T) { codexReviews(t, codex, u) })
	}
}

func codexReviews(t *testing.T, codex string, u *fwtest.User) {
	build := fwtest.ScriptedAPI(t,
		modelapi.Step{Shell: "echo x > x.txt && git add x.txt && git -c user.name=codex -c user.email=codex@example.com commit -qm 'codex: x'"},
		modelapi.Step{Text: "## Result\ncommitted x.txt"})
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.md"})
	endpoint(t, dir, build, "")
	env := codexEnv(t, codex)
	if r := fwtest.RunAs(t, u, dir, env, "work-once", "--run", "--ensure-worktree", "--endpoint", "cx", "--agent-id", "cx1", "--slug", "x"); r.Code != 0 {
		log, _ := os.ReadFile(look.LogPath(dir, "cx1"))
		t.Fatalf("the build: %v\nlog:\n%s", r, log)
	}
	review := fwtest.ScriptedAPI(t,
		modelapi.Step{Shell: "git log --oneline -3 && git show --stat HEAD"},
		modelapi.Step{Text: "ACCEPT\nx.txt is what the plan asks for."})
	endpoint(t, dir, review, "")
	// The one endpoint reviews its own change: this test is of the CLI, not of the choice of reviewer.
	r := fwtest.RunAs(t, u, dir, env, "review", "x", "--peer", "--endpoint", "cx", "--allow-self")
	tip := fwtest.GitOut(t, dir, "rev-parse", "refs/heads/feature/x")
	text, _ := os.ReadFile(filepath.Join(dir, ".plans", "reviews", "x", tip+".md"))
	rlog, _ := os.ReadFile(filepath.Join(dir, "var", "fleet", "logs", "review-x.log"))
	if r.Code != 0 || !strings.Contains(r.Stdout, ": ACCEPT (") {
		t.Fatalf("the review: %v\nits log:\n%s", r, rlog)
	}
	if !strings.Contains(string(text), "- **Verdict:** ACCEPT\n") || !strings.Contains(string(text), "x.txt is what the plan asks for.") {
		t.Errorf("the review recorded:\n%s", text)
	}
	// Its shell ran inside fleetwatch's sandbox: the outputs it sent back
	// are in its own record of the session.
	if out := toolOutputs(t, strings.TrimPrefix(env[0], "HOME=")); !strings.Contains(out, "codex: x") || !strings.Contains(out, "x.txt | 1 +") {
		t.Errorf("the reviewer's commands printed:\n%s", out)
	}
	if c := review.Calls(); len(c) != 2 || c[0].Step != 0 || c[1].Step != 1 {
		t.Errorf("the reviewer's calls: %+v", c)
	}
}

// A plan turn by the real Codex (an endpoint with plan_first): it writes
// its proposal with its shell where the driver says, outside the
// repository, and the proposal waits in the inbox for approval.
func TestCodexPlansContained(t *testing.T) {
	fwtest.NeedLandlock(t, 4)
	codex := fwtest.RealAgent(t, "codex")
	for _, u := range fwtest.Users(t) {
		t.Run(u.Label(), func(t *testing.T) { codexPlans(t, codex, u) })
	}
}

func codexPlans(t *testing.T, codex string, u *fwtest.User) {
	s := fwtest.ScriptedAPI(t,
		modelapi.Step{Shell: `printf '# Plan\nAdd a.txt.\n\n## Files in scope\n- a.txt\n' > "$FLEET_PROPOSAL" && echo written`},
		modelapi.Step{Text: "## Result\nproposal written"})
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/a.md"})
	endpoint(t, dir, s, "    plan_first: true\n")
	r := fwtest.RunAs(t, u, dir, codexEnv(t, codex), "work-once", "--run", "--ensure-worktree", "--endpoint", "cx", "--agent-id", "cx1", "--slug", "a")
	log, _ := os.ReadFile(look.LogPath(dir, "cx1"))
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
	if e := inbox[0]; e.Slug != "a" || e.State != "awaiting approval" || strings.Join(e.Scope, ",") != "a.txt" {
		t.Errorf("the inbox entry: %+v", e)
	}
	if !strings.Contains(string(log), "(metered)") {
		t.Errorf("the plan turn was not metered:\n%s", log)
	}
}

// toolOutputs is what Codex sent back of its commands, from its session
// records under home (~/.codex/sessions/…/rollout-*.jsonl).
func toolOutputs(t *testing.T, home string) string {
	t.Helper()
	var out strings.Builder
	filepath.WalkDir(filepath.Join(home, ".codex", "sessions"), func(p string, d os.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, ".jsonl") {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, line := range strings.Split(string(b), "\n") {
			var rec struct {
				Payload struct{ Type, Output string }
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Payload.Type == "function_call_output" {
				out.WriteString(rec.Payload.Output + "\n")
			}
		}
		return nil
	})
	return out.String()
}

// A plan sent back for more work resumes the real Codex's conversation:
// the next build on the endpoint runs `codex exec resume` with the thread
// the first one left, the API sees the conversation go on (the script's
// third step), and its second commit lands on the same branch.
func TestCodexResumesItsSession(t *testing.T) {
	fwtest.NeedLandlock(t, 4)
	codex := fwtest.RealAgent(t, "codex")
	commit := func(file string) string {
		return "echo " + file + " > " + file + " && git add " + file + " && git -c user.name=codex -c user.email=codex@example.com commit -qm 'codex: " + file + "'"
	}
	s := fwtest.ScriptedAPI(t,
		modelapi.Step{Shell: commit("one.txt")}, modelapi.Step{Text: "## Result\none"},
		modelapi.Step{Shell: commit("two.txt")}, modelapi.Step{Text: "## Result\ntwo"})
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/r.md"})
	endpoint(t, dir, s, "")
	env := codexEnv(t, codex)
	build := func() string {
		t.Helper()
		r := fwtest.RunEnv(t, dir, env, "work-once", "--run", "--ensure-worktree", "--endpoint", "cx", "--agent-id", "cx1", "--slug", "r")
		log, _ := os.ReadFile(look.LogPath(dir, "cx1"))
		if r.Code != 0 {
			t.Fatalf("the build: %v\nlog:\n%s", r, log)
		}
		return string(log)
	}
	build()
	first, ok := look.LastSession(dir, "r")
	if !ok {
		t.Fatal("the first build left no session")
	}
	fwtest.Want(t, fwtest.Run(t, dir, "review", "r", "--needs-work", "add two.txt"), 0)
	// Each run counts what it spent: the metered figures, not Codex's
	// own turn.completed, which on a resume is the whole thread's.
	if log := build(); !strings.Contains(log, "resuming session "+first.ID) || strings.Count(log, "spent 240 tokens, $0.00 (metered)") != 2 {
		t.Errorf("the second build did not resume %s, each run spending 240 tokens:\n%s", first.ID, log)
	}
	if got := fwtest.GitOut(t, dir, "log", "--format=%s", "dev..refs/heads/feature/r"); got != "codex: two.txt\ncodex: one.txt" {
		t.Errorf("feature/r holds %q", got)
	}
	if c := s.Calls(); len(c) != 4 || c[2].Step != 2 || c[3].Step != 3 {
		t.Errorf("the API's calls: %+v", c)
	}
}

// `doctor --live` runs the endpoint's real Codex against the built-in
// scripted API (the Responses API at /v1, a placeholder OPENAI_API_KEY)
// and says it worked.
func TestDoctorLiveRunsCodex(t *testing.T) {
	fwtest.NeedLandlock(t, 4)
	agentkit.DoctorLive(t, "codex", fwtest.RealAgent(t, "codex"))
}
