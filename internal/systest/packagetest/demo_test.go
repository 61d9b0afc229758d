package packagetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// demoWait bounds the demo's first screen, which builds its sample
// project's git history first.
const demoWait = 30 * time.Second

// checkDemo runs the installed `fleetwatch demo` in an 80×24 tmux pane
// until its first screen shows the plans pane and a sample plan, then
// quits it with q and expects exit 0.
func checkDemo(t *testing.T, fw string) {
	t.Helper()
	tmp := t.TempDir()
	status := filepath.Join(tmp, "status")
	sock := fmt.Sprintf("fwpkg-%d", os.Getpid())
	tmux := func(args ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-L", sock}, args...)...).CombinedOutput()
		return string(out), err
	}
	cmd := exec.Command("tmux", "-f", os.DevNull, "-L", sock, "new-session", "-d", "-s", "fw", "-x", "80", "-y", "24",
		"-c", tmp, "-e", "TMPDIR="+tmp, "--", "sh", "-c", `"$0" demo; echo $? > "$1"`, fw, status)
	// The pane is a real terminal: termenv turns colour off when CI is set.
	cmd.Env = append(withoutEnv("TMUX", "TMUX_PANE", "CI", "NO_COLOR"), "TERM=xterm-256color")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	t.Cleanup(func() { tmux("kill-server") })
	screen := ""
	for deadline := time.Now().Add(demoWait); ; time.Sleep(50 * time.Millisecond) {
		screen, _ = tmux("capture-pane", "-p", "-t", "fw")
		if strings.Contains(screen, "Plans") && strings.Contains(screen, "note-html-injection") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v the installed demo's first screen shows no plans:\n%s", demoWait, screen)
		}
	}
	tmux("send-keys", "-t", "fw", "q")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if b, err := os.ReadFile(status); err == nil && strings.TrimSpace(string(b)) != "" {
			if code := strings.TrimSpace(string(b)); code != "0" {
				t.Errorf("the installed demo exited %s after q; its screen was:\n%s", code, screen)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the installed demo did not exit within 10s of q:\n%s", screen)
		}
	}
}

// withoutEnv is this process's environment less the named variables.
func withoutEnv(names ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		drop := k == "TERM"
		for _, n := range names {
			drop = drop || k == n
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}
