//go:build etcd

package etcdclaims

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/etcdtest"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// endpoint is the embedded server's client URL; "" when it could not start
// (skipReason says why).
var endpoint, skipReason string

// TestMain starts one embedded etcd on loopback for the whole package, its
// data in a temporary folder; a helper process (deadWorker) skips it.
func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		os.Exit(deadWorker())
	}
	dir, err := os.MkdirTemp("", "etcdclaims-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var stop func()
	endpoint, skipReason, stop = etcdtest.Start(dir, os.Getenv("ETCDCLAIMS_FSYNC") != "")
	code := m.Run()
	stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

var projects atomic.Int64

// project makes a checkout whose features/ lane holds n ready plans
// (p000.md …) and returns its root and a project id of its own, so tests
// sharing the server never see each other's keys.
func project(t testing.TB, n int) (dir, id string) {
	t.Helper()
	if endpoint == "" {
		t.Skip(skipReason)
	}
	dir = t.TempDir()
	for _, lane := range model.Lanes {
		os.MkdirAll(filepath.Join(dir, ".plans", string(lane)), 0o755)
	}
	for i := range n {
		p := filepath.Join(dir, ".plans", "features", fmt.Sprintf("p%03d.md", i))
		if err := os.WriteFile(p, []byte(fmt.Sprintf("# Plan %d\n\n- **Priority:** P2\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, fmt.Sprintf("t%d-%d", os.Getpid(), projects.Add(1))
}

// open opens a backend (its own client) on the test server.
func open(t testing.TB, dir, id string) *Backend {
	t.Helper()
	b, err := Open(claims.Config{Backend: "etcd", Project: dir, Endpoints: []string{endpoint}, ProjectID: id, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

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

// waitFor polls cond every 100 ms for at most limit.
func waitFor(limit time.Duration, cond func() bool) bool {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}
