package realgeminitest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/agentout"
	"github.com/fleetwatch/fleetwatch/internal/modelapi"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/registry"
)

// runPreset runs the real Gemini CLI's build argv and env, as the gemini
// preset gives them, against api in a repository of its own, with home's
// settings; it returns its stdout and how long it took.
func runPreset(t *testing.T, bin, home string, api *modelapi.Server) ([]byte, time.Duration) {
	t.Helper()
	p, _ := registry.PresetNamed("gemini")
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	fill := strings.NewReplacer("{model}", "gemini-2.5-pro", "{base_url}", api.URL)
	argv := make([]string, len(p.Build))
	for i, w := range p.Build {
		argv[i] = fill.Replace(w)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), geminiEnv(bin, home)...)
	for _, e := range p.Env {
		cmd.Env = append(cmd.Env, fill.Replace(e))
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("gemini ran over a minute: %v\nstderr:\n%s", err, errb.Bytes())
	}
	if err == nil {
		t.Fatalf("gemini exited 0 on a fault:\n%s", out.Bytes())
	}
	return out.Bytes(), took
}

// Gemini CLI's own account of the faults modelapi answers in Google's
// error shape, read by agentout: a rate limit with its retry delay, a
// refused key, a spent daily quota. It retries a 429 itself (up to 10
// times, 5 s doubling, at least the retry delay): its settings'
// general.maxAttempts = 1 bounds that to one call, so the test takes
// seconds; a refused key or a spent daily quota ends the run at once
// whatever the setting.
func TestGeminiCLIFaultsRead(t *testing.T) {
	t.Parallel()
	gemini := fwtest.RealAgent(t, "gemini")
	cases := []struct {
		name    string
		fault   modelapi.Fault
		general map[string]any
		want    agentout.Result
	}{
		{"rate_limited", modelapi.Fault{Kind: modelapi.RateLimited, RetryAfter: 30 * time.Second}, map[string]any{"maxAttempts": 1},
			agentout.Result{Seen: true, Failed: true, Trouble: agentout.RateLimited, Status: 429, RetryAfter: 30 * time.Second}},
		{"auth", modelapi.Fault{Kind: modelapi.AuthFailed}, nil,
			agentout.Result{Seen: true, Failed: true, Trouble: agentout.AuthFailed, Status: 401}},
		{"usage_window", modelapi.Fault{Kind: modelapi.UsageWindow, Reset: time.Now().Add(time.Hour)}, nil,
			agentout.Result{Seen: true, Failed: true, Trouble: agentout.UsageWindow, Status: 429}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			api := fwtest.ScriptedAPI(t, modelapi.Step{Shell: "true", Fault: &c.fault})
			out, took := runPreset(t, gemini, geminiHome(t, c.general), api)
			got := agentout.Of("gemini", out)
			if got.Session == "" || got.Error == "" {
				t.Errorf("no session or error read: %+v\n%s", got, out)
			}
			got.Session, got.Error = "", ""
			if got != c.want {
				t.Errorf("read %+v, want %+v\n%s", got, c.want, out)
			}
			if n := len(api.Calls()); n != 1 || took > 20*time.Second {
				t.Errorf("%d calls in %v, want one in seconds", n, took)
			}
		})
	}
}
