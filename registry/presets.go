package registry

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Preset is a coding agent fleetwatch knows how to run headless: an
// endpoint's `agent: NAME` stands for its argv, so an operator need not
// learn each tool's flags. Every word is a placeholder template, filled in
// as a command: line's are ({plan}, {model}, {worktree}, …).
type Preset struct {
	Name    string
	Program string   // looked up on PATH
	Build   []string // a build turn: edits the worktree and commits on its branch
	// Review is a peer review: it reads the change, writes nothing and
	// prints its verdict (ACCEPT, REVISE or ESCALATE) first on stdout.
	Review []string
	// Plan is a plan-first turn: it writes its proposal to {proposal} and
	// changes nothing else; nil when the tool cannot write outside its
	// repository (then plan_first needs a plan_command:).
	Plan []string
	// Writes are the tool's own state, granted to its contained runs where
	// they exist (a ~/ is the home folder).
	Writes []string
	// Hosts are where the tool reaches its model and its sign-in when no
	// metering proxy stands in front of it: an unmetered endpoint's agents
	// reach them through the driver's egress proxy (HTTPS only).
	Hosts []string
	Exits string // how its exit statuses read
	Docs  string // where its headless flags are documented
	// Model is an example of a model name as the tool takes it, for the
	// endpoints.yaml scaffold writes.
	Model string
}

// The prompts every preset gives its agent: what fleetwatch needs from a
// turn, whichever tool runs it.
const (
	buildPrompt = "You are a fleetwatch worker in {worktree}, on the branch of plan {slug}. " +
		"Do the work the plan file {plan} describes, until its Done when section holds; " +
		"if $FLEET_APPROVED_PLAN names a file, follow the plan it holds. " +
		"Commit your work on this branch with git before you exit: uncommitted work is not landed. " +
		"Never edit anything under .plans/. A server you start listens on port {port}."
	reviewPrompt = "Review the change {base}..{commit} in this folder (git diff {base} {commit}) " +
		"against the plan {plan}. Change no file. Answer with ACCEPT, REVISE or ESCALATE alone " +
		"on the first line, then your findings."
	planPrompt = "Plan, do not build: read the plan file {plan} and this folder and change nothing here. " +
		"Write your implementation plan to {proposal}, ending with a \"## Files in scope\" section " +
		"that lists each file or folder you will change as \"- path\". " +
		"If $FLEET_FEEDBACK names a file, it holds a note from the coordinator on your last proposal."
)

// exitsPlain is how every preset's tool reports: none of them tells a
// failed task from a failed call by its status.
const exitsPlain = "0: the turn ended; non-zero: it failed before or during the turn (auth, API, usage: its log says which)"

// Presets is the table `agent:` reads and `fleetwatch agents` shows. The
// build modes may edit and commit: the Landlock sandbox, not the tool's own
// permission prompts (which nobody is there to answer), is the boundary.
var Presets = []Preset{
	{
		Name: "claude", Program: "claude", Model: "sonnet",
		// JSON output: its result line carries the run's usage and cost,
		// which the driver records (a review's stdout is its verdict, so
		// reviews keep plain text).
		Build:  []string{"claude", "-p", buildPrompt, "--model", "{model}", "--dangerously-skip-permissions", "--output-format", "json"},
		Review: []string{"claude", "-p", reviewPrompt, "--model", "{model}", "--allowedTools", "Read Grep Glob Bash(git diff:*) Bash(git log:*) Bash(git show:*)"},
		Plan:   []string{"claude", "-p", planPrompt, "--model", "{model}", "--dangerously-skip-permissions", "--output-format", "json"},
		Writes: []string{"~/.claude", "~/.claude.json"},
		Hosts:  []string{"api.anthropic.com", "console.anthropic.com"},
		Exits:  exitsPlain,
		Docs:   "https://docs.claude.com/en/docs/claude-code/headless",
	},
	{
		Name: "codex", Program: "codex", Model: "gpt-5-codex",
		// workspace-write cannot commit from a linked worktree (its git
		// metadata is outside the workspace): full access inside fleetwatch's sandbox.
		// --json: its turn.completed events carry the run's usage.
		Build:  []string{"codex", "exec", "--json", "--model", "{model}", "--sandbox", "danger-full-access", buildPrompt},
		Review: []string{"codex", "exec", "--model", "{model}", "--sandbox", "read-only", reviewPrompt},
		Plan:   []string{"codex", "exec", "--json", "--model", "{model}", "--sandbox", "danger-full-access", planPrompt},
		Writes: []string{"~/.codex"},
		Hosts:  []string{"api.openai.com", "auth.openai.com", "chatgpt.com"},
		Exits:  exitsPlain,
		Docs:   "https://developers.openai.com/codex/noninteractive",
	},
	{
		Name: "aider", Program: "aider", Model: "sonnet",
		// aider commits each edit itself (auto-commits is its default).
		Build:  []string{"aider", "--model", "{model}", "--yes-always", "--message", buildPrompt},
		Review: []string{"aider", "--model", "{model}", "--yes-always", "--no-auto-commits", "--dry-run", "--message", reviewPrompt},
		Writes: []string{"~/.aider"},
		Hosts:  []string{"api.anthropic.com", "api.openai.com"},
		Exits:  exitsPlain,
		Docs:   "https://aider.chat/docs/scripting.html",
	},
	{
		Name: "gemini", Program: "gemini", Model: "gemini-2.5-pro",
		Build:  []string{"gemini", "-m", "{model}", "--yolo", "-p", buildPrompt},
		Review: []string{"gemini", "-m", "{model}", "-p", reviewPrompt},
		Plan:   []string{"gemini", "-m", "{model}", "--yolo", "-p", planPrompt},
		Writes: []string{"~/.gemini"},
		Hosts:  []string{"generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com", "oauth2.googleapis.com"},
		Exits:  exitsPlain,
		Docs:   "https://github.com/google-gemini/gemini-cli/blob/main/docs/cli/headless.md",
	},
	{
		Name: "opencode", Program: "opencode", Model: "anthropic/claude-sonnet-4-5",
		Build:  []string{"opencode", "run", "--model", "{model}", buildPrompt},
		Review: []string{"opencode", "run", "--model", "{model}", "--agent", "plan", reviewPrompt},
		Plan:   []string{"opencode", "run", "--model", "{model}", planPrompt},
		Writes: []string{"~/.local/share/opencode", "~/.local/state/opencode"},
		Hosts:  []string{"api.anthropic.com", "api.openai.com", "models.dev"},
		Exits:  exitsPlain,
		Docs:   "https://opencode.ai/docs/cli/#run",
	},
}

// PresetNamed is the preset called name.
func PresetNamed(name string) (Preset, bool) {
	for _, p := range Presets {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}

func presetNames() string {
	names := make([]string, len(Presets))
	for i, p := range Presets {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// ModelHosts are the hosts ep's agents reach their model at when nothing
// meters it: its preset's, when it has one and no base_url. A metered
// endpoint's agents reach their model only through the metering proxy.
func (ep Endpoint) ModelHosts() []string {
	if ep.BaseURL != "" || ep.Agent == "" {
		return nil
	}
	p, _ := PresetNamed(ep.Agent)
	return p.Hosts
}

// ExistingWrites are p's state paths that exist on this machine, absolute:
// a grant of a missing path would stop every contained run.
func (p Preset) ExistingWrites() []string {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	var out []string
	for _, w := range p.Writes {
		abs := filepath.Join(home, strings.TrimPrefix(w, "~/"))
		if _, err := os.Stat(abs); err == nil {
			out = append(out, abs)
		}
	}
	return out
}

// applyPreset fills what ep leaves to its agent: the argv of each mode it
// does not name itself, and the tool's state as a sandbox grant.
func (p parser) applyPreset(ep *Endpoint, line int) error {
	pr, ok := PresetNamed(ep.Agent)
	if !ok {
		return p.errorf(line, "endpoint %q: unknown agent %q (known: %s; or give command: instead)", ep.Name, ep.Agent, presetNames())
	}
	if ep.Model == "" {
		return p.errorf(line, "endpoint %q: agent %s needs model: (the model it runs, passed as {model})", ep.Name, ep.Agent)
	}
	if ep.Command == nil {
		ep.Command = slices.Clone(pr.Build)
	}
	if ep.ReviewCommand == nil {
		ep.ReviewCommand = slices.Clone(pr.Review)
	}
	if ep.PlanCommand == nil {
		ep.PlanCommand = slices.Clone(pr.Plan)
	}
	if ep.PlanFirst && ep.PlanCommand == nil {
		return p.errorf(line, "endpoint %q: agent %s has no plan mode; plan_first needs a plan_command:", ep.Name, ep.Agent)
	}
	ep.SandboxWrite = append(pr.ExistingWrites(), ep.SandboxWrite...)
	return nil
}
