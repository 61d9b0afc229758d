package realopencodetest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"fleetwatch/internal/modelapi"
	"fleetwatch/registry"
	"fleetwatch/workers"
)

// AgentsEnv names the folder holding the real agent CLIs' programs
// (`.ci/run` installs them with npm into a cache folder and sets it).
const AgentsEnv = "FLEETWATCH_AGENTS"

// realAgent is the real CLI called name, from AgentsEnv's folder; the
// test skips saying how to install it where it is missing (fails in CI).
func realAgent(t *testing.T, name, pkg string) string {
	t.Helper()
	dir := os.Getenv(AgentsEnv)
	bin := filepath.Join(dir, name)
	if _, err := exec.LookPath(bin); dir == "" || err != nil {
		why := "install it: npm install --prefix ~/.cache/fleetwatch-agents " + pkg + " and set " + AgentsEnv + "=~/.cache/fleetwatch-agents/node_modules/.bin"
		if os.Getenv("CI") != "" {
			t.Fatalf("CI runs the real %s, but it is not in $%s (%q): %s", name, AgentsEnv, dir, why)
		}
		t.Skipf("no real %s here: %s", name, why)
	}
	return bin
}

// homeFor is a home folder of its own with the state folders preset grants
// its tool, and the environment a run of it gets from the test: that home,
// the CLI's folder on PATH, and an API key for the scripted API.
func homeFor(t *testing.T, preset, bin string, extra ...string) []string {
	t.Helper()
	p, _ := registry.PresetNamed(preset)
	home := t.TempDir()
	for _, w := range p.Writes {
		if err := os.MkdirAll(filepath.Join(home, strings.TrimPrefix(w, "~/")), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return append([]string{"HOME=" + home, "PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")}, extra...)
}

// startAPI serves steps until the test ends.
func startAPI(t *testing.T, steps ...modelapi.Step) *modelapi.Server {
	t.Helper()
	api, err := modelapi.Start(modelapi.Script{Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	return api
}

// writeFile writes content to dir/rel.
func writeFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// commitStep is a shell step that writes name and commits it as who.
func commitStep(who, name string) modelapi.Step {
	return modelapi.Step{Shell: "echo hello from " + who + " > " + name + " && git add " + name + " && " +
		"git -c user.name=" + who + " -c user.email=" + who + "@example.com commit -qm '" + who + ": hello' && echo committed"}
}

// runPreset runs mode's argv of preset ("build", "resume") with the
// program bin in dir as the driver would fill it, with its Env,
// uncontained and unmetered, at baseURL, and returns its stdout.
func runPreset(t *testing.T, bin, preset, mode, dir, baseURL, session string, env []string) []byte {
	t.Helper()
	p, _ := registry.PresetNamed(preset)
	ph := workers.Placeholders{Plan: filepath.Join(dir, "plan.md"), Worktree: dir, Model: p.Model, BaseURL: baseURL, Slug: "hello", Session: session}
	argv := ph.Expand(map[string][]string{"build": p.Build, "resume": p.Resume}[mode])
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, argv[1:]...)
	cmd.Dir, cmd.Env = dir, append(append(os.Environ(), env...), ph.Expand(p.Env)...)
	// qwen-code runs itself again as a child: the whole group goes at the
	// deadline, and its pipes are not waited on for long after.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	t.Logf("%s %s: %v; stderr:\n%s", preset, mode, err, clipped(stderr.Bytes()))
	return out
}

// clipped is at most 4 KiB of b, for a test's log.
func clipped(b []byte) []byte { return b[:min(len(b), 4<<10)] }
