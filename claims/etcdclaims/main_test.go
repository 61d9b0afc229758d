//go:build etcd

package etcdclaims

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"fleetwatch/claims"
	"fleetwatch/model"
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
	stop := startEtcd(dir)
	code := m.Run()
	stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

// freePort is a loopback port nothing listens on right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func startEtcd(dir string) (stop func()) {
	cp, err1 := freePort()
	pp, err2 := freePort()
	if err1 != nil || err2 != nil {
		skipReason = fmt.Sprintf("no loopback port for etcd: %v %v", err1, err2)
		return func() {}
	}
	cfg := embed.NewConfig()
	cfg.Dir = filepath.Join(dir, "data")
	cfg.Name = "fw"
	cu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", cp))
	pu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", pp))
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.Name + "=" + pu.String()
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.LogLevel = "error"
	cfg.UnsafeNoFsync = os.Getenv("ETCDCLAIMS_FSYNC") == ""
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		skipReason = "embedded etcd did not start: " + err.Error()
		return func() {}
	}
	select {
	case <-e.Server.ReadyNotify():
		endpoint = cu.String()
	case <-time.After(30 * time.Second):
		skipReason = "embedded etcd not ready in 30 s"
	}
	return func() {
		e.Close()
		select {
		case <-e.Server.StopNotify():
		case <-time.After(10 * time.Second):
		}
	}
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
