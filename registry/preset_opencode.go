package registry

// opencodePreset runs opencode headless.
var opencodePreset = Preset{
	Name: "opencode", Program: "opencode", Model: "anthropic/claude-sonnet-4-5",
	Build:  []string{"opencode", "run", "--model", "{model}", buildPrompt},
	Review: []string{"opencode", "run", "--model", "{model}", "--agent", "plan", reviewPrompt},
	Plan:   []string{"opencode", "run", "--model", "{model}", planPrompt},
	Writes: []string{"~/.local/share/opencode", "~/.local/state/opencode"},
	Hosts:  []string{"api.anthropic.com", "api.openai.com", "models.dev"},
	Exits:  exitsPlain,
	Docs:   "https://opencode.ai/docs/cli/#run",
}
