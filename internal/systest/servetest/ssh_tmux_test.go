package servetest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// tmuxSSH is the OpenSSH client in a tmux pane.
type tmuxSSH struct {
	t    *testing.T
	sock string
}

func (tt *tmuxSSH) tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-L", tt.sock}, args...)...).CombinedOutput()
	return string(out), err
}

func (tt *tmuxSSH) screen() string {
	out, _ := tt.tmux("capture-pane", "-p", "-t", "fw")
	return out
}

func (tt *tmuxSSH) waitShows(within time.Duration, wants ...string) {
	tt.t.Helper()
	deadline := time.Now().Add(within)
	for {
		s := tt.screen()
		missing := ""
		for _, w := range wants {
			if !strings.Contains(s, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			tt.t.Fatalf("after %v the screen does not show %q:\n%s", within, missing, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (tt *tmuxSSH) keys(keys ...string) {
	tt.t.Helper()
	if out, err := tt.tmux(append([]string{"send-keys", "-t", "fw"}, keys...)...); err != nil {
		tt.t.Fatalf("send-keys: %v: %s", err, out)
	}
}

// The OpenSSH client in tmux: an operator's key promotes a draft; the file
// moves and the event log names the key.
func TestTmuxSSHOperatorPromotes(t *testing.T) {
	for _, bin := range []string{"ssh", "tmux"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed (.ci/run installs it): %v", bin, err)
		}
	}
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "drafts/idea.md", Fields: "Value: high; Preferred models: mid"})
	alice := newKey(t, "alice@laptop")
	_, addr := startServe(t, dir, alice)
	_, port, _ := net.SplitHostPort(addr)
	tt := &tmuxSSH{t: t, sock: fmt.Sprintf("fwserve-%d", os.Getpid())}
	home := t.TempDir() // no user ssh config, no known_hosts written
	sshCmd := []string{"ssh", "-tt", "-F", "/dev/null", "-i", alice.privKey, "-p", port, "-o", "StrictHostKeyChecking=no",
		"-o", "UserKnownHostsFile=/dev/null", "-o", "IdentitiesOnly=yes", "-o", "LogLevel=ERROR", "127.0.0.1"}
	args := append([]string{"-f", os.DevNull, "-L", tt.sock, "new-session", "-d", "-s", "fw", "-x", "110", "-y", "30",
		"-e", "HOME=" + home, "--"}, sshCmd...)
	cmd := exec.Command("tmux", args...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", tt.sock, "kill-server").Run() })
	tt.waitShows(20*time.Second, "1 plan", "drafts")
	// It opens on bugs (or on drafts, the first lane holding plans).
	if !strings.Contains(tt.screen(), "idea") {
		tt.keys("[")
		tt.waitShows(5*time.Second, "idea")
	}
	tt.keys("p")
	tt.waitShows(5*time.Second, "Promote idea")
	tt.keys("Enter")
	fwtest.WaitFor(t, "features/idea.md on disk", 5*time.Second, func() bool { return fwtest.Exists(dir, "features/idea.md") })
	tt.waitShows(5*time.Second, "promoted idea")
	data, err := os.ReadFile(filepath.Join(dir, ".plans", "logs", "events.jsonl"))
	fp := strings.TrimSpace(fingerprint(t, alice))
	if err != nil || !strings.Contains(string(data), `"ssh:alice@laptop"`) || !strings.Contains(string(data), "ssh "+fp) {
		t.Errorf("the event log does not name ssh:alice@laptop and %s (%v):\n%s", fp, err, data)
	}
	tt.keys("q")
}
