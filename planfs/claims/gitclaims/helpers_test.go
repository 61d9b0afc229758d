package gitclaims

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// gitIn runs git in dir for a test, failing it on error.
func gitIn(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// remoteWith makes a bare remote whose dev branch holds plans (lane/name →
// header text) and returns its path.
func remoteWith(t testing.TB, plans map[string]string) string {
	t.Helper()
	root := t.TempDir()
	bare := filepath.Join(root, "remote.git")
	gitIn(t, root, "init", "-q", "--bare", "-b", "dev", bare)
	seed := filepath.Join(root, "seed")
	gitIn(t, root, "clone", "-q", bare, seed)
	for rel, text := range plans {
		p := filepath.Join(seed, ".plans", rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(text), 0o644)
	}
	os.WriteFile(filepath.Join(seed, "README.md"), []byte("x\n"), 0o644)
	gitIn(t, seed, "add", "-A")
	gitIn(t, seed, "commit", "-qm", "plans")
	gitIn(t, seed, "push", "-q", "origin", "HEAD:dev")
	return bare
}

// readyPlans are n ready plans, p00.md… in features/.
func readyPlans(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m[fmt.Sprintf("features/p%03d.md", i)] = fmt.Sprintf("# Plan %d\n\n- **Priority:** P2\n", i)
	}
	return m
}

// cloneOf clones url into a new folder and opens the backend there.
func cloneOf(t testing.TB, url string) (*Backend, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	gitIn(t, filepath.Dir(dir), "clone", "-q", url, dir)
	b, err := Open(claims.Config{Project: dir, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return b, dir
}

func view(t testing.TB, b *Backend) *claims.View {
	t.Helper()
	v, err := b.View(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// gitDaemon serves base's repositories read-write on a free loopback port
// and returns its git:// URL of base; it skips the test when git daemon
// cannot start.
func gitDaemon(t testing.TB, base string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback port: %v", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
		"--base-path="+base, "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), base)
	if err := cmd.Start(); err != nil {
		t.Skipf("git daemon cannot start: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for range 100 {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return fmt.Sprintf("git://127.0.0.1:%d/", port)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Skip("git daemon did not start listening within 5 s")
	return ""
}
