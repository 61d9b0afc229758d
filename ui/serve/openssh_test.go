package serve_test

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// The OpenSSH client with -A on a terminal: agent forwarding is refused,
// the board shows, q ends the session, ssh exits 0 and the server holds no
// PTY a second later.
func TestOpenSSHAgentRefusedAndQuit(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skipf("the OpenSSH client is not installed (CI installs openssh-client): %v", err)
	}
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/crash.md", Fields: "Priority: P1; Preferred models: mid"})
	alice := newKey(t, "", "alice@laptop")
	s := startServer(t, dir, []key{alice}, nil)
	_, port, _ := net.SplitHostPort(s.addr)
	home := t.TempDir()
	keyFile := filepath.Join(home, "id_alice")
	if err := os.WriteFile(keyFile, alice.priv, 0o600); err != nil {
		t.Fatal(err)
	}
	// An agent socket for -A to forward: it hangs up on ssh at once, so
	// ssh logs in with the key given by -i.
	agentSock := filepath.Join(home, "agent.sock")
	ln, err := net.Listen("unix", agentSock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	cmd := exec.Command("ssh", "-tt", "-A", "-F", "/dev/null", "-i", keyFile, "-p", port,
		"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "IdentitiesOnly=yes",
		"-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "127.0.0.1")
	cmd.Env = append(os.Environ(), "HOME="+home, "SSH_AUTH_SOCK="+agentSock, "TERM=xterm-256color")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 30, Cols: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := &syncBuf{}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	fwtest.WaitFor(t, "the board over OpenSSH", 20*time.Second, func() bool { return strings.Contains(ansi.Strip(out.String()), "crash") })
	if _, err := f.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("ssh exited with %v:\n%s", err, lastChars(ansi.Strip(out.String()), 2000))
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("ssh still runs 10s after q")
	}
	f.Close() // the client's own PTY
	waitPTYs(t, 0, time.Second)
	if log := s.log.String(); !strings.Contains(log, "refused agent forwarding") {
		t.Errorf("the server did not refuse agent forwarding:\n%s", log)
	}
}
