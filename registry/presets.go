package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
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
	// Origin is the vendor API the tool calls by default (scheme://host,
	// with the path prefix its base URL takes): a run with no base_url is
	// metered by a proxy in front of it. OriginEnv is the operator's
	// variable that points the tool elsewhere (ANTHROPIC_BASE_URL), which
	// then stands for Origin.
	Origin    string
	OriginEnv string
	// Env is what the tool is given to reach the run's metering proxy and
	// to run headless, each "NAME=template" ({base_url} is the proxy's).
	Env []string
	// EnvDefaults are like Env, but the operator's own value of a variable
	// wins over the preset's.
	EnvDefaults []string
	// Logins says, per way of signing in to the tool, whether its model
	// calls go through the metering proxy or run on reported usage only.
	Logins string
	// KeyEnv is the variable the tool reads an API key from; `doctor
	// --live` sets it to a placeholder for its scripted API.
	KeyEnv string
	// HomeFiles are settings files (by path under the home folder) a
	// headless run needs that no flag or variable gives, written only
	// where none exists yet and the tool's key variable (KeyEnv) is set:
	// what the tool's own first interactive run would have written.
	HomeFiles map[string]string
	// Resume is the build argv that resumes the session {session}: the
	// same conversation, for a plan sent back for more work.
	Resume []string
	// Proven is the tool version the real-CLI tests ran
	// (internal/systest/real*test); Version is the argv that prints it.
	Proven  string
	Version []string
	// Package is the npm package the tool installs from ("" when it is
	// not on npm).
	Package string
	Exits   string // how its exit statuses read
	Docs    string // where its headless flags are documented
	// Model is an example of a model name as the tool takes it, for the
	// endpoints.yaml scaffold writes.
	Model string
	// Talks are the conversations the tool holds (an endpoint's `talk:`),
	// each in one protocol; none: it runs one-shot only.
	Talks []Talk
}

// Talk is how a preset's tool holds a conversation in one protocol: the
// driver starts Argv (no prompt in it: the plan goes as the first turn)
// and speaks the protocol on its stdin and stdout.
type Talk struct {
	Protocol string // "acp", "app-server" or "stream-json" (workers/converse)
	Argv     []string
	// Env is added to the preset's Env for it.
	Env []string
	// AsksArgv and AsksEnv turn the tool's own permission prompts on for
	// an endpoint's `asks: true`: its requests then wait for a person in
	// the inbox instead of being allowed by the driver.
	AsksArgv []string
	AsksEnv  []string
	// Proven is the tool version the conversation tests ran.
	Proven string
}

// TalkIn is p's conversation in protocol, if it holds one.
func (p Preset) TalkIn(protocol string) (Talk, bool) {
	for _, t := range p.Talks {
		if t.Protocol == protocol {
			return t, true
		}
	}
	return Talk{}, false
}

// The prompts every preset gives its agent: what fleetwatch needs from a
// turn, whichever tool runs it.
const (
	buildPrompt = "You are a fleetwatch worker in {worktree}, on the branch of plan {slug}. " +
		"Do the work the plan file {plan} describes, until its Done when section holds; " +
		"if $FLEET_APPROVED_PLAN names a file, follow the plan it holds; if $FLEET_NOTES names a file, it holds the operator's notes for this run. " +
		"If you need a person's decision, run: \"$FLEET_BIN\" ask \"your question\" (it prints their answer). " +
		"Commit your work on this branch with git before you exit: uncommitted work is not landed. " +
		"Never edit anything under .plans/. A server you start listens on port {port}."
	reviewPrompt = "Review the change {base}..{commit} in this folder (git diff {base} {commit}) " +
		"against the plan {plan}. Change no file. Answer with ACCEPT, REVISE or ESCALATE alone " +
		"on the first line, then your findings."
	resumePrompt = "You are a fleetwatch worker in {worktree}, back on plan {slug} ({plan}) in the same session: " +
		"it was sent back for more work. Read the plan file again, including any review notes in it, " +
		"finish the work until its Done when section holds, and commit it on this branch with git before you exit. " +
		"Never edit anything under .plans/. A server you start listens on port {port}."
	planPrompt = "Plan, do not build: read the plan file {plan} and this folder and change nothing here. " +
		"Write your implementation plan to {proposal}, ending with a \"## Files in scope\" section " +
		"that lists each file or folder you will change as \"- path\". " +
		"If $FLEET_FEEDBACK names a file, it holds a note from the coordinator on your last proposal."
)

// TalkPrompt is a conversation's first turn: the build prompt, as the
// driver sends it (filled in like an argv word).
const TalkPrompt = buildPrompt

// exitsPlain is how every preset's tool reports: none of them tells a
// failed task from a failed call by its status.
const exitsPlain = "0: the turn ended; non-zero: it failed before or during the turn (auth, API, usage: its log says which)"

// Presets is the table `agent:` reads and `fleetwatch agents` shows. The
// build modes may edit and commit: the Landlock sandbox, not the tool's own
// permission prompts (which nobody is there to answer), is the boundary.
var Presets = []Preset{claudePreset, codexPreset, aiderPreset, geminiPreset, opencodePreset, qwenPreset}

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

// ModelHosts are the hosts ep's agents reach through the driver's egress
// proxy: its preset's sign-in hosts, when it has a preset and no base_url.
// Its model calls go through the metering proxy (Upstream), so the host
// they are for is left out: a call around the meter finds no way out.
func (ep Endpoint) ModelHosts() []string {
	if ep.BaseURL != "" || ep.Agent == "" {
		return nil
	}
	p, _ := PresetNamed(ep.Agent)
	api, vendor := hostOf(ep.Upstream()), hostOf(p.Origin)
	var out []string
	for _, h := range p.Hosts {
		if h != api && h != vendor {
			out = append(out, h)
		}
	}
	return out
}

// Upstream is where ep's agents' model calls go, behind each run's
// metering proxy: its base_url; for a preset without one, the operator's
// own variable for the tool's API (the preset's OriginEnv, such as
// ANTHROPIC_BASE_URL) when set, else the vendor's API (Origin). "" when
// nothing is known to meter: an endpoint's own command: without base_url.
func (ep Endpoint) Upstream() string {
	if ep.BaseURL != "" || ep.Agent == "" {
		return ep.BaseURL
	}
	p, _ := PresetNamed(ep.Agent)
	if p.OriginEnv != "" {
		if v := os.Getenv(p.OriginEnv); v != "" {
			return v
		}
	}
	return p.Origin
}

// AgentEnv is what ep's preset gives its tool in the environment, each
// "NAME=template" to be filled as a command is ({base_url} the proxy's).
func (ep Endpoint) AgentEnv() []string {
	p, _ := PresetNamed(ep.Agent)
	env := slices.Clone(p.Env)
	for _, kv := range p.EnvDefaults {
		name, _, _ := strings.Cut(kv, "=")
		if _, set := os.LookupEnv(name); !set {
			env = append(env, kv)
		}
	}
	return append(env, ep.TalkEnv...)
}

// hostOf is the host of a URL, "" when it has none.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// PrepareHome readies the home folder for the tool's first contained run:
// the state folders among its Writes that do not exist yet are made (a
// name with no extension is a folder; a grant can only name what exists,
// and the sandbox would keep the tool from making them), and its
// HomeFiles are written where missing.
func (p Preset) PrepareHome() error {
	home, err := os.UserHomeDir()
	if err != nil {
		return err
	}
	for _, w := range p.Writes {
		if filepath.Ext(strings.TrimPrefix(filepath.Base(w), ".")) != "" {
			continue
		}
		if err := makeMissingDir(filepath.Join(home, strings.TrimPrefix(w, "~/"))); err != nil {
			return err
		}
	}
	if p.KeyEnv == "" || os.Getenv(p.KeyEnv) == "" {
		return nil
	}
	for rel, text := range p.HomeFiles {
		if err := writeMissing(filepath.Join(home, filepath.FromSlash(rel)), text); err != nil {
			return err
		}
	}
	return nil
}

// writeMissing writes text to a new file at abs, private to its owner,
// making its folder; a file already there is left as it is.
func writeMissing(abs, text string) error {
	if err := makeMissingDir(filepath.Dir(abs)); err != nil {
		return err
	}
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// PrepareHome readies the home folder for ep's preset (Preset.PrepareHome);
// an endpoint with no preset needs nothing.
func (ep Endpoint) PrepareHome() error {
	p, ok := PresetNamed(ep.Agent)
	if !ok {
		return nil
	}
	if err := p.PrepareHome(); err != nil {
		return fmt.Errorf("endpoint %s: readying the home folder for %s: %v", ep.Name, p.Program, err)
	}
	return nil
}

func makeMissingDir(abs string) error {
	if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
		return os.MkdirAll(abs, 0o700)
	}
	return nil
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
		ep.ResumeCommand = slices.Clone(pr.Resume)
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
	return p.applyTalk(ep, pr)
}

// applyTalk makes ep's builds a conversation in its `talk:` protocol,
// with its preset's argv for it (and the words that turn the tool's
// permission prompts on for `asks: true`).
func (p parser) applyTalk(ep *Endpoint, pr Preset) error {
	if ep.Talk == "" {
		if ep.Asks {
			return p.errorf(ep.TalkLine, "endpoint %q: asks: needs talk: (a conversation whose requests wait in the inbox)", ep.Name)
		}
		return nil
	}
	t, ok := pr.TalkIn(ep.Talk)
	if !ok {
		return p.errorf(ep.TalkLine, "endpoint %q: agent %s does not talk %s (it talks: %s)", ep.Name, pr.Name, ep.Talk, pr.talkNames())
	}
	ep.Command = slices.Clone(t.Argv)
	ep.TalkEnv = slices.Clone(t.Env)
	if ep.Asks {
		ep.Command = append(ep.Command, t.AsksArgv...)
		ep.TalkEnv = append(ep.TalkEnv, t.AsksEnv...)
	}
	// A conversation resumes by itself: the plan's next run is another
	// conversation, in the same session where the protocol can.
	ep.ResumeCommand = nil
	return nil
}

// talkNames lists the protocols p's tool talks, "one-shot only" when none.
func (p Preset) talkNames() string {
	if len(p.Talks) == 0 {
		return "one-shot only"
	}
	names := make([]string, len(p.Talks))
	for i, t := range p.Talks {
		names[i] = t.Protocol
	}
	return strings.Join(names, ", ")
}
