package registry

// opencodePreset runs opencode headless (`opencode run`) with its
// anthropic provider, which calls Anthropic's Messages API with an API key
// (ANTHROPIC_API_KEY, or one `opencode auth login` stored) at its
// baseURL: every run is metered. It has no Claude subscription login, and
// its other providers (models given as openai/…, google/…) are not sent
// through the meter: their calls find no way out of a contained run.
var opencodePreset = Preset{
	Name: "opencode", Program: "opencode", Model: "anthropic/claude-sonnet-4-5",
	// --format json: its events carry the session id, each step's usage
	// and the error that ended a run. --auto approves what it would ask
	// (a command outside the worktree, a write to {proposal}): headless,
	// it would refuse them and still exit 0. A review keeps the default
	// format, whose stdout is the model's text alone (its tool calls go to
	// stderr), and the plan agent, which may not edit.
	Build:  []string{"opencode", "run", "--format", "json", "--auto", "--model", "{model}", buildPrompt},
	Review: []string{"opencode", "run", "--auto", "--agent", "plan", "--model", "{model}", reviewPrompt},
	Plan:   []string{"opencode", "run", "--format", "json", "--auto", "--model", "{model}", planPrompt},
	Resume: []string{"opencode", "run", "--format", "json", "--auto", "--session", "{session}", "--model", "{model}", resumePrompt},
	Writes: []string{"~/.local/share/opencode", "~/.local/state/opencode", "~/.cache/opencode", "~/.config/opencode"},
	Hosts:  []string{"api.anthropic.com"},
	// The anthropic provider's baseURL holds the API's version, as does
	// its own reading of ANTHROPIC_BASE_URL.
	Origin: "https://api.anthropic.com/v1", OriginEnv: "ANTHROPIC_BASE_URL", KeyEnv: "ANTHROPIC_API_KEY",
	Logins: "an Anthropic API key (ANTHROPIC_API_KEY, or one `opencode auth login` stored) calls the anthropic provider's baseURL: metered; " +
		"it has no Claude subscription login, and its other providers' logins are not used by an anthropic/ model",
	// The config given in the environment is merged over the operator's
	// own, which stays untouched. No models.dev fetch (its built-in list
	// knows the models), no update check, no sharing, no language-server
	// downloads: a headless run's only calls are the model's. No snapshots
	// (its own git copy of the worktree, for undo): the branch is the record.
	Env: []string{
		`OPENCODE_CONFIG_CONTENT={"autoupdate":false,"share":"disabled","snapshot":false,"provider":{"anthropic":{"options":{"baseURL":"{base_url}"}}}}`,
		"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_SHARE=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1",
	},
	// `opencode acp` speaks ACP on stdio; it takes no --model, but its
	// session offers a "model" option, which the conversation sets
	// (converse.Config.Model), and the config names the model too. Its
	// permission rules allow all but a few by default; asks turns the
	// tools that change things (edits, commands, fetches) to "ask", so
	// that each request reaches the driver. Each restates the whole
	// config: a later OPENCODE_CONFIG_CONTENT replaces the preset's.
	Talks: []Talk{{
		// Its ACP side calls its own HTTP server: on {talk_port}, a loopback
		// port its sandbox lets it connect to (any other is refused).
		Protocol: "acp", Argv: []string{"opencode", "acp", "--port", "{talk_port}"},
		Env: []string{`OPENCODE_CONFIG_CONTENT={"autoupdate":false,"share":"disabled","snapshot":false,"model":"{model}",` +
			`"provider":{"anthropic":{"options":{"baseURL":"{base_url}"}}}}`},
		AsksEnv: []string{`OPENCODE_CONFIG_CONTENT={"autoupdate":false,"share":"disabled","snapshot":false,"model":"{model}",` +
			`"provider":{"anthropic":{"options":{"baseURL":"{base_url}"}}},"permission":{"edit":"ask","bash":"ask","webfetch":"ask"}}`},
		Proven: "1.18.33",
	}},
	Package: "opencode-ai",
	Proven:  "1.18.33",
	Version: []string{"opencode", "--version"},
	Exits:   exitsPlain,
	Docs:    "https://opencode.ai/docs/cli/#run",
}
