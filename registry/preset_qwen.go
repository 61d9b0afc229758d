package registry

// qwenPreset runs qwen-code headless. It calls an OpenAI-compatible Chat
// Completions API (OpenAI's, DashScope's, a local server's) with an API
// key at OPENAI_BASE_URL, so every run is metered; its Qwen OAuth login is
// gone from 0.24 (`qwen auth` says "removed"). It runs on Node 20 although
// it asks for 22.
var qwenPreset = Preset{
	Name: "qwen", Program: "qwen", Model: "qwen3-coder-plus",
	// --auth-type openai: with none chosen in its settings it stops
	// before any work ("No auth type is selected"), exit 1.
	// stream-json: one JSON event a line, its result line Claude Code's
	// shape (usage, session id, error). A review keeps the text format,
	// whose stdout is the model's last text alone.
	Build:  []string{"qwen", "--auth-type", "openai", "--yolo", "--output-format", "stream-json", "--model", "{model}", buildPrompt},
	Review: []string{"qwen", "--auth-type", "openai", "--yolo", "--model", "{model}", reviewPrompt},
	Plan:   []string{"qwen", "--auth-type", "openai", "--yolo", "--output-format", "stream-json", "--model", "{model}", planPrompt},
	Resume: []string{"qwen", "--auth-type", "openai", "--yolo", "--output-format", "stream-json", "--resume", "{session}", "--model", "{model}", resumePrompt},
	Writes: []string{"~/.qwen"},
	Hosts:  []string{"api.openai.com", "dashscope.aliyuncs.com", "dashscope-intl.aliyuncs.com"},
	Origin: "https://api.openai.com/v1", OriginEnv: "OPENAI_BASE_URL", KeyEnv: "OPENAI_API_KEY",
	Logins: "an API key (OPENAI_API_KEY) for any OpenAI-compatible API calls OPENAI_BASE_URL: metered; its Qwen OAuth login is removed in 0.24",
	// No usage statistics (sent to Alibaba's telemetry by default), no
	// update check, no early connection to the API.
	Env: []string{
		"OPENAI_BASE_URL={base_url}", "QWEN_USAGE_STATISTICS_ENABLED=false",
		"QWEN_CODE_SKIP_UPDATE_CHECK_ONCE=true", "QWEN_CODE_DISABLE_PRECONNECT=1", "QWEN_CODE_SUPPRESS_YOLO_WARNING=1",
	},
	Package: "@qwen-code/qwen-code",
	Proven:  "0.24.4",
	Version: []string{"qwen", "--version"},
	Exits:   exitsPlain,
	Docs:    "https://github.com/QwenLM/qwen-code#readme",
}
