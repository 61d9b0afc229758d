package registry

// aiderPreset runs aider headless.
var aiderPreset = Preset{
	Name: "aider", Program: "aider", Model: "sonnet",
	// aider commits each edit itself (auto-commits is its default).
	Build:  []string{"aider", "--model", "{model}", "--yes-always", "--message", buildPrompt},
	Review: []string{"aider", "--model", "{model}", "--yes-always", "--no-auto-commits", "--dry-run", "--message", reviewPrompt},
	Writes: []string{"~/.aider"},
	Hosts:  []string{"api.anthropic.com", "api.openai.com"},
	Exits:  exitsPlain,
	Docs:   "https://aider.chat/docs/scripting.html",
}
