package servetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// TestServedSessionsGetTerminalNotifications: fleetwatch serve's notifier
// writes the terminal's own notification to each session showing the
// project, once per notice, wrapped for tmux's passthrough in a session
// whose TERM is tmux's, and between frames.
func TestServedSessionsGetTerminalNotifications(t *testing.T) {
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "in-progress/ship-it.md", Fields: "Priority: P1"}, fwtest.Plan{Rel: "features/later.md"})
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("notify:\n  terminal: {osc: [777]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	alice := newKey(t, "alice@laptop")
	_, addr := startServe(t, dir, alice)
	cfg := &gossh.ClientConfig{User: "x", Auth: []gossh.AuthMethod{gossh.PublicKeys(alice.signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second}
	open := func(term string) *testkit.LockedBuffer {
		c, err := gossh.Dial("tcp", addr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		s, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		out := &testkit.LockedBuffer{}
		s.Stdout, s.Stderr = out, out
		if err := s.RequestPty(term, 30, 100, gossh.TerminalModes{}); err != nil {
			t.Fatal(err)
		}
		if err := s.Shell(); err != nil {
			t.Fatal(err)
		}
		fwtest.WaitFor(t, "the board on "+term, 15*time.Second, func() bool { return strings.Contains(text(out), "later") })
		return out
	}
	plain, tmux := open("xterm-256color"), open("tmux-256color")

	fwtest.Want(t, fwtest.Run(t, dir, "complete", "in-progress/ship-it.md", "--to", "review-needed", "--force"), fwtest.ExitOK)
	osc := "\x1b]777;notify;fleetwatch · " + filepath.Base(dir) + ";ship-it waits for review: "
	wrapped := "\x1bPtmux;" + strings.ReplaceAll(osc, "\x1b", "\x1b\x1b")
	fwtest.WaitFor(t, "OSC 777 in the plain session", 15*time.Second, func() bool { return strings.Contains(plain.String(), osc) })
	fwtest.WaitFor(t, "OSC 777 for tmux in the other", 15*time.Second, func() bool { return strings.Contains(tmux.String(), wrapped) })
	time.Sleep(time.Second) // the sender's next looks send nothing more
	for name, out := range map[string]*testkit.LockedBuffer{"plain": plain, "tmux": tmux} {
		if n := strings.Count(out.String(), "]777;notify;"); n != 1 {
			t.Errorf("the %s session got %d notifications, want 1", name, n)
		}
	}
	if strings.Contains(plain.String(), "\x1bPtmux;") {
		t.Errorf("the plain session got tmux's passthrough")
	}
	data, err := os.ReadFile(filepath.Join(dir, "var", "fleet", "notify", "sent.jsonl"))
	if err != nil || !strings.Contains(string(data), `"to":"terminal"`) {
		t.Errorf("the record has no terminal send: %v\n%s", err, data)
	}
}
