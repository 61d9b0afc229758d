package serve_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// TestLogOverSSH: a viewer's key (and an operator's) gets a worker's last
// lines with `log AGENT [N]`, escape sequences made safe; a log that is a
// symlink is refused, not followed; anything else is refused; and the
// server says where it listens under var/ while it runs.
func TestLogOverSSH(t *testing.T) {
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/crash.md"})
	logs := filepath.Join(dir, look.LogDir)
	os.MkdirAll(logs, 0o755)
	text := "2026-01-01T00:00:00.000Z out one\n2026-01-01T00:00:01.000Z out two \x1b]0;owned\x07\n2026-01-01T00:00:02.000Z out three\n"
	os.WriteFile(filepath.Join(logs, "w-1.log"), []byte(text), 0o644)
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("do not serve\n"), 0o644)
	os.Symlink(secret, filepath.Join(logs, "w-2.log"))
	alice, vic := newKey(t, "", "alice@laptop"), newKey(t, "", "vic@phone")
	s := startServer(t, dir, []key{alice}, []key{vic})
	if addr := look.ServeAddress(dir); addr != s.addr {
		t.Errorf("the serve address under var/ is %q, want %q", addr, s.addr)
	}
	run := func(k key, cmd string) (string, error) {
		c, err := s.dial(t, k)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		sess, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		out, err := sess.CombinedOutput(cmd)
		return string(out), err
	}
	for _, k := range []key{alice, vic} {
		out, err := run(k, "log w-1 2")
		if err != nil || strings.Contains(out, "\x1b") || !strings.Contains(out, "out two ?]0;owned?") || !strings.Contains(out, "three") || strings.Contains(out, "one") {
			t.Errorf("log w-1 2: %v\n%q", err, out)
		}
	}
	if out, err := run(vic, "log w-2"); err == nil || strings.Contains(out, "do not serve") {
		t.Errorf("a symlinked log was served: %v %q", err, out)
	}
	if out, err := run(vic, "log w-1 many"); err == nil || !strings.Contains(out, "N is a number") {
		t.Errorf("log with a bad N: %v %q", err, out)
	}
	if out, err := run(vic, "rm -rf /"); err == nil || !strings.Contains(out, "answers only") {
		t.Errorf("another command: %v %q", err, out)
	}

	// A cockpit elsewhere fetches it as the operator: its own key, the
	// server's host key known beforehand, never trusted on first use.
	t.Setenv("SSH_AUTH_SOCK", "")
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), vic.priv, 0o600)
	os.WriteFile(filepath.Join(home, ".ssh", "known_hosts"), nil, 0o600)
	q := look.LogFetch{Addr: s.addr, Agent: "w-1", N: 2, Home: home}
	if lines, err := q.Fetch(context.Background()); err == nil || lines != nil {
		t.Errorf("a fetch from an unknown host: %v %q", err, lines)
	}
	hostPEM, err := os.ReadFile(filepath.Join(dir, "var", "fleet", "serve", "host_ed25519"))
	if err != nil {
		t.Fatal(err)
	}
	host, err := gossh.ParsePrivateKey(hostPEM)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(home, ".ssh", "known_hosts"), []byte(knownhosts.Line([]string{s.addr}, host.PublicKey())+"\n"), 0o600)
	lines, err := q.Fetch(context.Background())
	if err != nil || len(lines) != 2 || !strings.HasSuffix(lines[1], "out three") {
		t.Fatalf("the fetched log: %v %q", err, lines)
	}
}
