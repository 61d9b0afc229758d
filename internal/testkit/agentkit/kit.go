// Package agentkit is the kit of the whole-program tests that run the real
// agent CLIs of the presets: a home and environment for a tool, its build,
// review and plan turns under a real driver against internal/modelapi,
// and the metered spend checked against what the API sent.
package agentkit

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/modelapi"
	"github.com/fleetwatch/fleetwatch/registry"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// HomeFor is a home folder of its own with the state folders preset grants
// its tool, and the environment a run of it gets from the test: that home,
// the CLI's folder on PATH, and an API key for the scripted API.
func HomeFor(t *testing.T, preset, bin string, extra ...string) []string {
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

// WriteFile writes content to dir/rel.
func WriteFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// CommitStep is a shell step that writes name and commits it as who.
func CommitStep(who, name string) modelapi.Step {
	return modelapi.Step{Shell: "echo hello from " + who + " > " + name + " && git add " + name + " && " +
		"git -c user.name=" + who + " -c user.email=" + who + "@example.com commit -qm '" + who + ": hello' && echo committed"}
}

// RunPreset runs mode's argv of preset ("build", "resume") with the
// program bin in dir as the driver would fill it, with its Env,
// uncontained and unmetered, at baseURL, and returns its stdout.
func RunPreset(t *testing.T, bin, preset, mode, dir, baseURL, session string, env []string) []byte {
	t.Helper()
	p, _ := registry.PresetNamed(preset)
	ph := proc.Placeholders{Plan: filepath.Join(dir, "plan.md"), Worktree: dir, Model: p.Model, BaseURL: baseURL, Slug: "hello", Session: session}
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
	t.Logf("%s %s: %v; stderr:\n%s", preset, mode, err, Clipped(stderr.Bytes()))
	return out
}

// Clipped is at most 4 KiB of b, for a test's log.
func Clipped(b []byte) []byte { return b[:min(len(b), 4<<10)] }

// spentFigure is the "spent N tokens" a driver's log gives, -1 when none.
var spentFigure = regexp.MustCompile(`spent (\d+) tokens, .* \(metered\)`)

// WantMetered checks the run's log says it spent, metered, what api sent.
// A call the tool cut and sent again (opencode does, when a stream stalls
// on a loaded machine) is counted whole by api but only as far as it was
// read by the meter: the gap may then be up to that call's answer.
func WantMetered(t *testing.T, log []byte, api *modelapi.Server) {
	t.Helper()
	m := spentFigure.FindSubmatch(log)
	if m == nil {
		t.Errorf("the log lacks a metered spend:\n%s", log)
		return
	}
	spent, _ := strconv.ParseInt(string(m[1]), 10, 64)
	sent, again := api.Usage().Tokens(), int64(0)
	calls := api.Calls()
	for i, c := range calls {
		if c.Step >= 0 && i+1 < len(calls) && slices.ContainsFunc(calls[i+1:], func(d modelapi.Call) bool { return d.Step == c.Step }) {
			again++
		}
	}
	if spent != sent && (spent > sent || sent-spent > again*120) {
		t.Errorf("the driver metered %d tokens, the API sent %d (%d calls sent again); calls %+v; log:\n%s", spent, sent, again, calls, log)
	}
}
