// Package servekeystest runs `fleetwatch serve` as a real process against
// the real OpenSSH client, one key listed on several lines: each line's
// from=, restrict and command= bind to what that line grants.
package servekeystest

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"fleetwatch/internal/testkit/fwtest"
	"fleetwatch/ui/cli"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }

// key is a client key: its private key file, for ssh -i, and its
// authorized_keys line without options.
type key struct {
	privKey string
	line    string
}

func newKey(t *testing.T, comment string) key {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sshPub, _ := gossh.NewPublicKey(pub)
	block, err := gossh.MarshalPrivateKey(priv, comment)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	return key{privKey: path, line: strings.TrimSpace(string(gossh.MarshalAuthorizedKey(sshPub))) + " " + comment}
}

// projects scaffolds two projects, api and web, a plan in each.
func projects(t *testing.T) (base string, roots []string) {
	t.Helper()
	base = t.TempDir()
	for _, n := range []string{"api", "web"} {
		dir := filepath.Join(base, n)
		if r := fwtest.Run(t, base, "scaffold", dir); r.Code != 0 {
			t.Fatalf("scaffold: %v", r)
		}
		fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "bugs/fix-" + n + ".md", Fields: "Preferred models: mid"}, time.Hour)
		roots = append(roots, dir)
	}
	return base, roots
}

// keyFiles writes the operators' and viewers' files.
func keyFiles(t *testing.T, ops, views string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	o, v := filepath.Join(dir, "operators"), filepath.Join(dir, "viewers")
	if err := os.WriteFile(o, []byte(ops), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(v, []byte(views), 0o600); err != nil {
		t.Fatal(err)
	}
	return o, v
}

// startServe runs `fleetwatch serve` over api and web on 127.0.0.1:0 with
// these key files and returns the port it listens on.
func startServe(t *testing.T, base string, roots []string, ops, views string) string {
	t.Helper()
	cmd := fwtest.Cmd(base, nil, "serve", "--root", roots[0], "--root", roots[1], "--listen", "127.0.0.1:0",
		"--authorized-keys", ops, "--viewers", views)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
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
		_, port, _ := net.SplitHostPort(a)
		return port
	case <-time.After(20 * time.Second):
		t.Fatal("fleetwatch serve did not say where it listens in 20s")
	}
	return ""
}

// ssh runs the OpenSSH client with k against 127.0.0.1:port, no user
// config and no known_hosts, its stdin held open, for at most 15 s. It
// returns what the client printed (stdout then stderr) and whether it
// exited by itself.
func ssh(t *testing.T, k key, port string, args ...string) (out string, exited bool, err error) {
	t.Helper()
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skipf("the OpenSSH client is not installed (.ci/run installs it): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	argv := append([]string{"-F", "/dev/null", "-i", k.privKey, "-p", port, "-o", "StrictHostKeyChecking=no",
		"-o", "UserKnownHostsFile=/dev/null", "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
		"-o", "LogLevel=ERROR"}, args...)
	cmd := exec.CommandContext(ctx, "ssh", argv...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "TERM=xterm-256color")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Held open: a session must end on the server's word, not on our EOF.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	err = cmd.Run()
	return stdout.String() + stderr.String(), ctx.Err() == nil, err
}
