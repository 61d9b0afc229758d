// Package servetest runs `fleetwatch serve` as a real process: SIGTERM with
// sessions open, and the OpenSSH client in tmux promoting a plan.
package servetest

import (
	"bufio"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) { fwtest.MainInMemory(m, cli.Main) }

// key is a client key: its signer, its private key file and its line.
type key struct {
	signer  gossh.Signer
	privKey string // path of the OpenSSH private key, for ssh -i
	line    string
}

func newKey(t *testing.T, comment string) key {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := gossh.NewSignerFromKey(priv)
	sshPub, _ := gossh.NewPublicKey(pub)
	block, err := gossh.MarshalPrivateKey(priv, comment)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	return key{signer: signer, privKey: path, line: strings.TrimSpace(string(gossh.MarshalAuthorizedKey(sshPub))) + " " + comment}
}

// startServe runs `fleetwatch serve` on 127.0.0.1:0 in dir for ops' keys
// and returns the process and the address it listens on.
func startServe(t *testing.T, dir string, ops ...key) (*exec.Cmd, string) {
	t.Helper()
	keys := filepath.Join(t.TempDir(), "authorized_keys")
	var b strings.Builder
	for _, k := range ops {
		b.WriteString(`no-agent-forwarding ` + k.line + "\n")
	}
	if err := os.WriteFile(keys, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return serve(t, dir, "--root", dir, "--authorized-keys", keys)
}

// serve runs `fleetwatch serve args... --listen 127.0.0.1:0` in dir and
// returns the process (killed at the test's end unless waited for) and
// the address it says it listens on.
func serve(t *testing.T, dir string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := fwtest.Cmd(dir, nil, append(append([]string{"serve"}, args...), "--listen", "127.0.0.1:0")...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	addr := make(chan string, 1)
	go func() {
		for sc := bufio.NewScanner(out); sc.Scan(); {
			if a, ok := strings.CutPrefix(sc.Text(), "fleetwatch serve: listening on "); ok {
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		return cmd, a
	case <-time.After(20 * time.Second):
		t.Fatal("fleetwatch serve did not say where it listens in 20s")
	}
	return nil, ""
}

func fingerprint(t *testing.T, k key) string { return gossh.FingerprintSHA256(k.signer.PublicKey()) }
