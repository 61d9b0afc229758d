package servetest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// `fleetwatch serve` refuses, exit 2 and one line naming what is wrong,
// before it listens: a FIFO as --host-key (without hanging), a
// world-readable host key, a bound that would turn a limit off.
func TestServeRefusesBadStart(t *testing.T) {
	dir := fwtest.NewTree(t)
	alice := newKey(t, "alice@laptop")
	keysDir := t.TempDir()
	ops := filepath.Join(keysDir, "operators")
	if err := os.WriteFile(ops, []byte(alice.line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(keysDir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := gossh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(keysDir, "open_key")
	if err := os.WriteFile(open, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o644); err != nil {
		t.Fatal(err)
	}
	serve := []string{"serve", "--root", dir, "--listen", "127.0.0.1:0", "--authorized-keys", ops}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--host-key", fifo}, "--host-key " + fifo + ": not a regular file"},
		{[]string{"--host-key", open}, "mode 0644 lets group or others at the private key; run chmod 600 " + open},
		{[]string{"--max-sessions", "0"}, "--max-sessions 0: at least 1"},
		{[]string{"--login-timeout", "0s"}, "--login-timeout 0s"},
	} {
		r := fwtest.Run(t, dir, append(serve, c.args...)...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
			t.Errorf("%s: %v", c.args, r)
		}
	}
}
