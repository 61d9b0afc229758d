package registry

// geminiPreset runs gemini headless.
var geminiPreset = Preset{
	Name: "gemini", Program: "gemini", Model: "gemini-2.5-pro",
	Build:  []string{"gemini", "-m", "{model}", "--yolo", "-p", buildPrompt},
	Review: []string{"gemini", "-m", "{model}", "-p", reviewPrompt},
	Plan:   []string{"gemini", "-m", "{model}", "--yolo", "-p", planPrompt},
	Writes: []string{"~/.gemini"},
	Hosts:  []string{"generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com", "oauth2.googleapis.com"},
	Exits:  exitsPlain,
	Docs:   "https://github.com/google-gemini/gemini-cli/blob/main/docs/cli/headless.md",
}
