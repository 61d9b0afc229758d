package registry

// claudePreset runs claude headless.
var claudePreset = Preset{
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
}
