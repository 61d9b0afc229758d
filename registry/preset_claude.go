package registry

// claudePreset runs Claude Code headless. Its API calls go to
// ANTHROPIC_BASE_URL whichever way it signs in (an API key, or a Claude
// subscription's OAuth token, which it sends to the same API), so every
// run is metered; the token's refresh goes to its sign-in host, through
// the egress proxy, unmetered and costless.
var claudePreset = Preset{
	Name: "claude", Program: "claude", Model: "sonnet",
	// JSON output: its result line carries the run's usage, cost,
	// session id and error, which the driver reads (a review's stdout is
	// its verdict, so reviews keep plain text).
	Build:  []string{"claude", "-p", buildPrompt, "--model", "{model}", "--dangerously-skip-permissions", "--output-format", "json"},
	Review: []string{"claude", "-p", reviewPrompt, "--model", "{model}", "--allowedTools", "Read Grep Glob Bash(git diff:*) Bash(git log:*) Bash(git show:*)"},
	Plan:   []string{"claude", "-p", planPrompt, "--model", "{model}", "--dangerously-skip-permissions", "--output-format", "json"},
	Resume: []string{"claude", "-p", resumePrompt, "--resume", "{session}", "--model", "{model}", "--dangerously-skip-permissions", "--output-format", "json"},
	Writes: []string{"~/.claude", "~/.claude.json"},
	Hosts:  []string{"api.anthropic.com", "console.anthropic.com"},
	Origin: "https://api.anthropic.com", OriginEnv: "ANTHROPIC_BASE_URL", KeyEnv: "ANTHROPIC_API_KEY",
	// No update checks, telemetry or error reports: a headless run's
	// only calls are the model's.
	Env: []string{"ANTHROPIC_BASE_URL={base_url}", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"},
	// Two retries of its own, not ten, unless the operator says: with ten
	// it spends three minutes on a refused key or a rate limit and then
	// exits printing nothing, while fleetwatch backs the endpoint off and
	// hands the plan on.
	EnvDefaults: []string{"CLAUDE_CODE_MAX_RETRIES=2"},
	Logins:      "an API key (ANTHROPIC_API_KEY) and a Claude subscription's login both call ANTHROPIC_BASE_URL: metered",
	Package:     "@anthropic-ai/claude-code",
	Proven:      "2.1.328",
	Version:     []string{"claude", "--version"},
	Exits:       exitsPlain,
	Docs:        "https://docs.claude.com/en/docs/claude-code/headless",
	// Stream-json in and out: the plan and notes go as user messages,
	// interrupts and permission answers as control messages
	// (workers/converse). Permissions are bypassed as in one-shot runs;
	// for asks: the last --permission-mode wins, and stdio sends each
	// permission request to the driver.
	Talks: []Talk{{
		Protocol: "stream-json",
		Argv: []string{"claude", "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
			"--model", "{model}", "--permission-mode", "bypassPermissions"},
		AsksArgv: []string{"--permission-mode", "default", "--permission-prompt-tool", "stdio"},
		Proven:   "2.1.328",
	}},
}
