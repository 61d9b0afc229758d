package registry

// geminiPreset runs Gemini CLI headless. Its model calls go to
// GOOGLE_GEMINI_BASE_URL when it signs in with an API key (GEMINI_API_KEY;
// security.auth.selectedType "gemini-api-key" in ~/.gemini/settings.json),
// so those runs are metered. A Google login ("oauth-personal") calls Code
// Assist (cloudcode-pa.googleapis.com, or CODE_ASSIST_ENDPOINT) and Vertex
// AI calls GOOGLE_VERTEX_BASE_URL: neither passes the proxy, and such runs
// count on the usage Gemini CLI reports.
//
// Gemini CLI 0.61.0 takes a set GOOGLE_GEMINI_BASE_URL with no auth type
// chosen in its settings for a "gateway" login that its headless check
// then refuses (exit 41, "Invalid auth method selected."): an API-key
// user's settings must choose "gemini-api-key" (its first interactive run
// writes it). So for a user with GEMINI_API_KEY set and no settings file
// yet, the driver writes the one that first run would: the key's login,
// no usage statistics, no update check (system defaults would be a layer
// below the user's, but 0.61.0 reads them only from a folder root owns).
// It retries a 429 itself, up to 10 times with backoff (its
// settings' general.maxAttempts lowers that); a spent daily quota or a
// retry delay over 5 minutes ends the run at once.
var geminiPreset = Preset{
	Name: "gemini", Program: "gemini", Model: "gemini-2.5-pro",
	// stream-json: one JSON event a line, "init" with the session id,
	// "result" with the run's stats and error, which the driver reads (a
	// review's stdout is its verdict, so reviews keep plain text).
	Build: []string{"gemini", "-m", "{model}", "--yolo", "--output-format", "stream-json", "-p", buildPrompt},
	// A headless review offers no shell tool but the git commands allowed
	// (--allowed-tools is deprecated for policy files, still read in 0.61).
	Review: []string{"gemini", "-m", "{model}", "--allowed-tools", "run_shell_command(git diff)",
		"--allowed-tools", "run_shell_command(git log)", "--allowed-tools", "run_shell_command(git show)", "-p", reviewPrompt},
	Plan: []string{"gemini", "-m", "{model}", "--yolo", "--output-format", "stream-json", "-p", planPrompt},
	// --resume takes the session's UUID; sessions are kept per project
	// folder under ~/.gemini/tmp.
	Resume: []string{"gemini", "--resume", "{session}", "-m", "{model}", "--yolo", "--output-format", "stream-json", "-p", resumePrompt},
	Writes: []string{"~/.gemini"},
	Hosts:  []string{"generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com", "oauth2.googleapis.com"},
	Origin: "https://generativelanguage.googleapis.com", OriginEnv: "GOOGLE_GEMINI_BASE_URL", KeyEnv: "GEMINI_API_KEY",
	// Every worktree is new to it: trusted by env, or it stops (exit 55).
	// No OpenTelemetry; its usage statistics (to play.googleapis.com) and
	// update checks are settings only (privacy.usageStatisticsEnabled,
	// general.enableAutoUpdate), and a contained run cannot reach them.
	Env: []string{"GOOGLE_GEMINI_BASE_URL={base_url}", "GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_TELEMETRY_ENABLED=false"},
	HomeFiles: map[string]string{".gemini/settings.json": `{"security":{"auth":{"selectedType":"gemini-api-key"}},` +
		`"privacy":{"usageStatisticsEnabled":false},"general":{"enableAutoUpdate":false}}` + "\n"},
	Package: "@google/gemini-cli",
	Proven:  "0.61.0",
	Version: []string{"gemini", "--version"},
	Exits: "0: the turn ended; 41: no usable login; 42: bad input; 52: bad settings; 53: turn limit; " +
		"54: a tool failed fatally; 55: untrusted folder; an API error: its HTTP status modulo 256 " +
		"(429: 173, 401: 145, 503: 247); 1: anything else",
	Docs: "https://github.com/google-gemini/gemini-cli/blob/main/docs/cli/headless.md",
}
