package registry

import "strings"

// codexPreset runs Codex headless. Codex 0.169 ignores OPENAI_BASE_URL
// (its built-in openai provider opens a Responses WebSocket to its own
// host), so each argv names a provider of its own with -c: the Responses
// API over HTTP at {base_url}, the metering proxy. That provider signs in
// with the API key in OPENAI_API_KEY only (env_key), which the proxy
// passes on unchanged, so every API-key run is metered. A ChatGPT login
// (`codex login`, ~/.codex/auth.json) is not used by it: its tokens are
// for ChatGPT's own backend (chatgpt.com/backend-api/codex), not
// api.openai.com, and a run without OPENAI_API_KEY stops at once with
// "Missing environment variable: `OPENAI_API_KEY`" (read as auth
// trouble). No variable is needed besides: --disable plugins stops its
// start-up `git ls-remote` of github.com/openai/plugins, and
// analytics.enabled=false its usage reports.
var codexPreset = Preset{
	Name: "codex", Program: "codex", Model: "gpt-5-codex",
	// Codex's own sandbox cannot run inside fleetwatch's: its bubblewrap
	// finds no user namespace ("bwrap: setting up uid map: Permission
	// denied", so every command of a read-only review failed) and its
	// legacy Landlock mode refuses to run without bubblewrap; and
	// workspace-write could not commit from a linked worktree (its git
	// metadata is outside the workspace). So full access, inside
	// fleetwatch's sandbox, which also refuses a review that wrote.
	// --json: its events carry the turn's usage, session and error; a
	// review's stdout is its last message alone, the verdict.
	Build:  codexArgv("exec", "danger-full-access", "--json", buildPrompt),
	Review: codexArgv("exec", "danger-full-access", reviewPrompt),
	Plan:   codexArgv("exec", "danger-full-access", "--json", planPrompt),
	Resume: codexArgv("exec resume", "danger-full-access", "--json", "{session}", resumePrompt),
	// Codex's app-server (JSON-RPC on stdio, workers/converse): the same
	// provider and start-up flags as the one-shot runs; it takes no
	// --model, so the model is config. Its sandbox and approval policy
	// are the conversation's thread/start (full access, and "untrusted"
	// for an endpoint's asks: true), so asks needs no argv of its own.
	Talks:  []Talk{{Protocol: "app-server", Argv: codexTalkArgv(), Proven: "0.169.0"}},
	Writes: []string{"~/.codex"},
	Hosts:  []string{"api.openai.com", "auth.openai.com", "chatgpt.com"},
	Origin: "https://api.openai.com/v1", OriginEnv: "OPENAI_BASE_URL", KeyEnv: "OPENAI_API_KEY",
	Logins:  "an API key (OPENAI_API_KEY) calls the preset's provider at the proxy: metered; a ChatGPT login (codex login) is not used by it: the run stops asking for OPENAI_API_KEY",
	Package: "@openai/codex",
	Proven:  "0.169.0",
	Version: []string{"codex", "--version"},
	Exits:   exitsPlain,
	Docs:    "https://developers.openai.com/codex/noninteractive",
}

// codexProvider is the -c value that sends Codex's model calls to
// {base_url} over the Responses API, signed with $OPENAI_API_KEY.
const codexProvider = `model_providers.fleetwatch={name="fleetwatch",base_url="{base_url}",wire_api="responses",env_key="OPENAI_API_KEY"}`

// codexArgv is `codex <sub>` with the provider, no start-up fetches, the
// model and the sandbox mode (as config: `exec resume` takes no
// --sandbox), then rest.
func codexArgv(sub, sandbox string, rest ...string) []string {
	argv := append([]string{"codex"}, strings.Fields(sub)...)
	argv = append(argv, codexFlags...)
	argv = append(argv, "--model", "{model}", "-c", `sandbox_mode="`+sandbox+`"`)
	return append(argv, rest...)
}

// codexFlags name the provider and turn off the start-up fetches.
var codexFlags = []string{"-c", "model_provider=fleetwatch", "-c", codexProvider, "-c", "analytics.enabled=false", "--disable", "plugins"}

// codexTalkArgv is `codex app-server` with codexFlags and the model.
func codexTalkArgv() []string {
	argv := append([]string{"codex", "app-server"}, codexFlags...)
	return append(argv, "-c", `model="{model}"`)
}
