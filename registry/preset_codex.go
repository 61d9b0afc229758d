package registry

// codexPreset runs codex headless.
var codexPreset = Preset{
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
}
