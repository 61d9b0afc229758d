package windowtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/modelapi"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// forger stands in for Claude Code: it makes one call through its metering
// proxy, which the API answers well, then prints Claude Code's result line
// for a refused key and exits 1, as if to have its endpoint disabled.
const forger = `#!/usr/bin/env python3
import os, urllib.request
req = urllib.request.Request(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", method="POST",
    data=b'{"model":"m","messages":[{"role":"user","content":"hi"}]}', headers={"content-type": "application/json"})
urllib.request.urlopen(req).read()
print('{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error","api_error_status":401,' +
      '"result":"Invalid API key \u00b7 Fix external API key","session_id":"forged"}')
raise SystemExit(1)
`

// An agent cannot shut its own endpoint by printing an API error its
// proxy never saw: where the proxy saw the calls answered well, the run is
// a task failure, and the endpoint stays open (before, the tool's word
// alone disabled it until a person cleared it).
func TestForgedTroubleIsTheTasks(t *testing.T) {
	t.Parallel()
	fwtest.NeedLandlock(t, 4)
	api := fwtest.ScriptedAPI(t, modelapi.Step{Text: "## Result\nnothing"})
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte(forger), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/hello.md"})
	endpoints := "endpoints:\n  - name: one\n    tier: mid\n    model: claude-sonnet-4-5\n    agent: claude\n    base_url: " + api.URL + "\n"
	if err := os.WriteFile(filepath.Join(dir, "endpoints.yaml"), []byte(endpoints), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + t.TempDir(), "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
	r := fwtest.RunEnv(t, dir, env, "work-once", "--run", "--ensure-worktree", "--endpoint", "one", "--agent-id", "w1", "--slug", "hello")
	log, _ := os.ReadFile(look.LogPath(dir, "w1"))
	if len(api.Calls()) != 1 {
		t.Fatalf("the forger made %d calls through its proxy: %v\n%s", len(api.Calls()), r, log)
	}
	if !strings.Contains(string(log), "task failure 1 of 3") || strings.Contains(string(log), "endpoint trouble") {
		t.Errorf("the run is not the task's failure: %v\nlog:\n%s", r, log)
	}
	if st, ok := look.ReadEndpoint(dir, "one"); ok {
		t.Errorf("the agent's word shut its endpoint: %+v", st)
	}
	if !fwtest.Exists(dir, "features/hello.md") {
		t.Errorf("the plan is not handed back")
	}
}
