package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// uncomment turns every setting of a scaffolded file on: a line "#key" or
// "#  nested" loses its #; notes ("# text") stay.
func uncomment(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "# ") || strings.HasPrefix(l, "#  ") {
			lines[i] = l[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// Scaffold's endpoints.yaml lists nothing as written (it is no registry,
// like a missing one), and with every endpoint uncommented it has one per
// preset, each running its preset's argv, and one command of its own.
func TestTemplateParses(t *testing.T) {
	_, err := Parse("endpoints.yaml", []byte(Template()))
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "no endpoints listed yet") {
		t.Fatalf("the template as written: %v", err)
	}
	reg, err := Parse("endpoints.yaml", []byte(uncomment(Template())))
	if err != nil {
		t.Fatalf("uncommented: %v\n%s", err, uncomment(Template()))
	}
	if len(reg.Endpoints) != len(Presets)+1 {
		t.Fatalf("uncommented: %d endpoints, want %d", len(reg.Endpoints), len(Presets)+1)
	}
	for i, p := range Presets {
		ep := reg.Endpoints[i]
		if ep.Name != p.Name || ep.Agent != p.Name || ep.Model != p.Model || !slices.Equal(ep.Command, p.Build) || !slices.Equal(ep.ReviewCommand, p.Review) || !slices.Equal(ep.PlanCommand, p.Plan) {
			t.Errorf("endpoint %d: %+v, want preset %s's argv", i, ep, p.Name)
		}
	}
	if last := reg.Endpoints[len(Presets)]; last.Agent != "" || !slices.Equal(last.Command, []string{"./scripts/agent.sh", "{plan}"}) {
		t.Errorf("the command endpoint: %+v", last)
	}
}

// Every preset builds, reviews with its prompt and model, and says how.
func TestPresetTable(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Presets {
		if seen[p.Name] || p.Program == "" || p.Docs == "" || p.Exits == "" || p.Model == "" || len(p.Writes) == 0 {
			t.Errorf("preset %s: incomplete or twice: %+v", p.Name, p)
		}
		seen[p.Name] = true
		for mode, argv := range map[string][]string{"build": p.Build, "review": p.Review, "plan": p.Plan} {
			if argv == nil && mode == "plan" {
				continue
			}
			joined := strings.Join(argv, "\x00")
			if len(argv) == 0 || argv[0] != p.Program || !strings.Contains(joined, "{model}") || !strings.Contains(joined, "{plan}") {
				t.Errorf("preset %s %s: %q", p.Name, mode, argv)
			}
		}
		if !strings.Contains(strings.Join(p.Review, " "), "ACCEPT, REVISE or ESCALATE") {
			t.Errorf("preset %s: its review does not ask for a verdict", p.Name)
		}
		if p.Plan != nil && !strings.Contains(strings.Join(p.Plan, " "), "{proposal}") {
			t.Errorf("preset %s: its plan turn does not write {proposal}", p.Name)
		}
	}
	for _, want := range []string{"claude", "codex", "aider", "gemini", "opencode"} {
		if !seen[want] {
			t.Errorf("no preset %s", want)
		}
	}
}

// agent: fills only what the endpoint leaves out, grants the tool's state
// where it exists, and a bad agent endpoint is one line naming the line.
func TestAgentEndpoint(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.Mkdir(filepath.Join(home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	reg, err := Parse("endpoints.yaml", []byte("endpoints:\n  - name: a\n    tier: mid\n    model: opus\n    agent: claude\n    sandbox_write: [/tmp]\n"+
		"  - name: b\n    tier: mid\n    model: opus\n    agent: claude\n    command: [my-claude, '{plan}']\n"))
	if err != nil {
		t.Fatal(err)
	}
	claude, _ := PresetNamed("claude")
	a, b := reg.Endpoints[0], reg.Endpoints[1]
	if got := reg.SandboxWriteFor(a); !slices.Equal(a.Command, claude.Build) || !slices.Equal(got, []string{filepath.Join(home, ".claude"), "/tmp"}) {
		t.Errorf("agent: claude: %q, grants %q (~/.claude.json does not exist: not granted)", a.Command, got)
	}
	// A tool's state folder a new user lacks is made for its first run, so
	// it can be granted.
	gemini, _ := PresetNamed("gemini")
	if err := gemini.PrepareHome(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(home, ".gemini")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("~/.gemini for a new user: %v %v", fi, err)
	}
	settings := filepath.Join(home, ".gemini", "settings.json")
	if _, err := os.Stat(settings); err == nil {
		t.Errorf("settings written with no GEMINI_API_KEY set")
	}
	// With its key set, its first headless run gets the key's login; a
	// settings file of the user's own is never touched.
	t.Setenv("GEMINI_API_KEY", "k")
	if err := gemini.PrepareHome(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(settings); err != nil || !strings.Contains(string(b), `"selectedType":"gemini-api-key"`) {
		t.Errorf("the new user's settings: %q %v", b, err)
	}
	os.WriteFile(settings, []byte("{}"), 0o600)
	if err := gemini.PrepareHome(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(settings); string(b) != "{}" {
		t.Errorf("the user's own settings were changed: %q", b)
	}
	if !slices.Equal(b.Command, []string{"my-claude", "{plan}"}) || !slices.Equal(b.ReviewCommand, claude.Review) {
		t.Errorf("command: overrides the build only: %q, review %q", b.Command, b.ReviewCommand)
	}
	for _, c := range []struct{ yaml, want string }{
		{"endpoints:\n  - name: a\n    tier: mid\n    model: m\n    agent: cluade\n", `endpoints.yaml:5: endpoint "a": unknown agent "cluade" (known: claude, codex, aider, gemini, opencode, qwen; or give command: instead)`},
		{"endpoints:\n  - name: a\n    tier: mid\n    agent: claude\n", `endpoints.yaml:4: endpoint "a": agent claude needs model: (the model it runs, passed as {model})`},
		{"endpoints:\n  - name: a\n    tier: mid\n    model: m\n    plan_first: true\n    agent: aider\n", `endpoints.yaml:6: endpoint "a": agent aider has no plan mode; plan_first needs a plan_command:`},
		{"endpoints:\n  - name: a\n    tier: mid\n    model: m\n    agent: [claude]\n", `endpoints.yaml:5: endpoint "a" agent must be a string, found a list`},
	} {
		if _, err := Parse("endpoints.yaml", []byte(c.yaml)); err == nil || err.Error() != c.want {
			t.Errorf("%q:\n got %v\nwant %s", c.yaml, err, c.want)
		}
	}
}

// A preset endpoint without base_url is metered by default: its agents
// reach their vendor's sign-in hosts, never its API but through the
// metering proxy; an endpoint with a base_url reaches nothing else.
func TestModelHostsOnlyWhenUnmetered(t *testing.T) {
	reg, err := Parse("endpoints.yaml", []byte("endpoints:\n  - name: direct\n    tier: mid\n    model: opus\n    agent: claude\n"+
		"  - name: metered\n    tier: mid\n    model: opus\n    agent: claude\n    base_url: http://127.0.0.1:9/v1\n"+
		"  - name: own\n    tier: mid\n    model: m\n    command: [x]\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"direct": {"console.anthropic.com"}, "metered": nil, "own": nil}
	for _, ep := range reg.Endpoints {
		if got := ep.ModelHosts(); !slices.Equal(got, want[ep.Name]) {
			t.Errorf("%s: ModelHosts() = %q, want %q", ep.Name, got, want[ep.Name])
		}
	}
	upstream := map[string]string{"direct": "https://api.anthropic.com", "metered": "http://127.0.0.1:9/v1", "own": ""}
	for _, ep := range reg.Endpoints {
		if got := ep.Upstream(); got != upstream[ep.Name] {
			t.Errorf("%s: Upstream() = %q, want %q", ep.Name, got, upstream[ep.Name])
		}
	}
	// The operator's own ANTHROPIC_BASE_URL stands for the vendor's API.
	t.Setenv("ANTHROPIC_BASE_URL", "https://gateway.example.com/anthropic")
	if got := reg.Endpoints[0].Upstream(); got != "https://gateway.example.com/anthropic" {
		t.Errorf("with ANTHROPIC_BASE_URL set: Upstream() = %q", got)
	}
	for _, p := range Presets {
		if len(p.Hosts) == 0 {
			t.Errorf("preset %s names no host for its model", p.Name)
		}
	}
}

func TestTalkEndpoint(t *testing.T) {
	base := "endpoints:\n  - name: e\n    tier: mid\n    model: m\n    agent: %s\n"
	for _, c := range []struct{ agent, extra, want string }{
		{"opencode", "    talk: acp\n", ""},
		{"codex", "    talk: app-server\n", ""},
		{"claude", "    talk: stream-json\n    asks: true\n", ""},
		{"opencode", "    talk: one-shot\n", ""},
		{"opencode", "    talk: stream-json\n", "endpoints.yaml:6: endpoint \"e\": agent opencode does not talk stream-json (it talks: acp)"},
		{"aider", "    talk: acp\n", "endpoints.yaml:6: endpoint \"e\": agent aider does not talk acp (it talks: one-shot only)"},
		{"opencode", "    talk: chat\n", "endpoints.yaml:6: endpoint \"e\" talk must be one of one-shot, acp, app-server, stream-json, not \"chat\""},
		{"opencode", "    asks: true\n", "endpoints.yaml:6: endpoint \"e\": asks: needs talk: (a conversation whose requests wait in the inbox)"},
		{"opencode", "    talk: acp\n    asks: maybe\n", "endpoints.yaml:7: endpoint \"e\" asks must be true or false"},
	} {
		reg, err := Parse("endpoints.yaml", []byte(fmt.Sprintf(base, c.agent)+c.extra))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %q: %v", c.agent, c.extra, err)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("%s %q: got %v, want %s", c.agent, c.extra, err, c.want)
		case c.want == "" && strings.Contains(c.extra, "talk: acp"):
			ep := reg.Endpoints[0]
			if ep.Talk != "acp" || ep.Command[1] != "acp" || ep.ResumeCommand != nil {
				t.Errorf("talk: acp gives %q, %v, resume %v", ep.Talk, ep.Command, ep.ResumeCommand)
			}
		}
	}
	reg, err := Parse("endpoints.yaml", []byte(fmt.Sprintf(base, "claude")+"    talk: stream-json\n    asks: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if argv := strings.Join(reg.Endpoints[0].Command, " "); !strings.Contains(argv, "--permission-prompt-tool stdio") {
		t.Errorf("asks: true does not turn claude's prompts on: %s", argv)
	}
}
