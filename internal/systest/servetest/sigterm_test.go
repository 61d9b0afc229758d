package servetest

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// text is a session's output so far, without its terminal's escapes.
func text(l *testkit.LockedBuffer) string { return ansi.Strip(l.String()) }

// SIGTERM with three sessions open: each shows the line, the process exits
// 0 within 2 s.
func TestSigtermWithSessionsOpen(t *testing.T) {
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/crash.md", Fields: "Priority: P1; Preferred models: mid"})
	alice := newKey(t, "alice@laptop")
	cmd, addr := startServe(t, dir, alice)
	cfg := &gossh.ClientConfig{User: "x", Auth: []gossh.AuthMethod{gossh.PublicKeys(alice.signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second}
	var outs []*testkit.LockedBuffer
	var sessions []*gossh.Session
	for range 3 {
		c, err := gossh.Dial("tcp", addr, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		s, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		out := &testkit.LockedBuffer{}
		s.Stdout, s.Stderr = out, out
		if err := s.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{}); err != nil {
			t.Fatal(err)
		}
		if err := s.Shell(); err != nil {
			t.Fatal(err)
		}
		outs, sessions = append(outs, out), append(sessions, s)
	}
	for _, o := range outs {
		fwtest.WaitFor(t, "the board on every screen", 15*time.Second, func() bool { return strings.Contains(text(o), "crash") })
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("fleetwatch serve after SIGTERM: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("fleetwatch serve still runs 2s after SIGTERM")
	}
	t.Logf("exited 0 %v after SIGTERM", time.Since(start))
	for i, s := range sessions {
		s.Wait()
		if !strings.Contains(text(outs[i]), "fleetwatch serve is stopping") {
			t.Errorf("session %d did not see the stopping line:\n%q", i, tail(text(outs[i])))
		}
	}
}

func tail(s string) string {
	if len(s) > 1500 {
		return s[len(s)-1500:]
	}
	return s
}

// A bad key file is one line naming FILE:LINE and exit 2, before listening;
// so is a missing one.
func TestBadKeyFileExits2(t *testing.T) {
	dir := fwtest.NewTree(t)
	bad := filepath.Join(t.TempDir(), "authorized_keys")
	if err := os.WriteFile(bad, []byte("# ok\n\nnot a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fwtest.OneLineError(t, fwtest.Run(t, dir, "serve", "--root", dir, "--listen", "127.0.0.1:0", "--authorized-keys", bad), bad+":3")
	missing := filepath.Join(dir, "nope")
	fwtest.OneLineError(t, fwtest.Run(t, dir, "serve", "--root", dir, "--listen", "127.0.0.1:0", "--authorized-keys", missing), missing)
	fwtest.OneLineError(t, fwtest.Run(t, dir, "serve", "--root", dir, "--listen", "127.0.0.1:0"), "--authorized-keys")
}
