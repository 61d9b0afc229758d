// Package remotetest runs the real fleetwatch binary over a remote claims
// backend: clones of one bare repository, used by path and through
// `git daemon` on 127.0.0.1, racing, recovering, killed mid-push. Its
// non-test files are the fleet the tests share with remoteracetest,
// fleettest and fleetfloodtest.
package remotetest

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// LeaseRefs is the remote namespace of lease refs (gitclaims.LeaseRefs).
const LeaseRefs = "refs/fleetwatch/leases/"

// Fleet is one project's remote: a bare repository holding the plans on
// main, which clones claim from.
type Fleet struct {
	Bare string // the bare repository's path
}

// Plans makes n ready plans, a third of them bugs.
func Plans(n int) []fwtest.Plan {
	var out []fwtest.Plan
	for i := range n {
		lane := "features"
		if i%3 == 0 {
			lane = "bugs"
		}
		out = append(out, fwtest.Plan{Rel: fmt.Sprintf("%s/p%03d.md", lane, i), Fields: fmt.Sprintf("Priority: P%d", 1+i%3)})
	}
	return out
}

// NewFleet makes a bare remote whose main holds ps.
func NewFleet(t testing.TB, ps ...fwtest.Plan) *Fleet {
	t.Helper()
	seed := fwtest.NewTree(t, ps...)
	if err := os.WriteFile(filepath.Join(seed, ".gitignore"), []byte("var/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testkit.Git(t, seed, "init", "-q")
	testkit.Git(t, seed, "add", "-A")
	testkit.Git(t, seed, "commit", "-q", "-m", "plans")
	bare := filepath.Join(t.TempDir(), "remote.git")
	testkit.Git(t, seed, "clone", "-q", "--bare", seed, bare)
	return &Fleet{Bare: bare}
}

// Clone makes a worker machine's checkout of url (the bare path, or a
// git:// URL), with claims through git.
func (f *Fleet) Clone(t testing.TB, url string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	// One git process: clone -c writes the identity into the clone's config.
	testkit.Git(t, filepath.Dir(dir), "clone", "-q", "-c", "user.name=worker", "-c", "user.email=worker@example.com", url, dir)
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("claims: {backend: git, remote: origin}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// NeedBackend skips t while this fleetwatch has no git claims backend.
func NeedBackend(t testing.TB, dir string) {
	t.Helper()
	r := fwtest.Run(t, dir, "work-once", "--root", dir, "--claims", "git", "--list")
	if r.Code == 2 && strings.Contains(r.Stderr, "not built") {
		t.Skipf("the git claims backend is not built: %s", strings.TrimSpace(r.Stderr))
	}
	if r.Code != 0 {
		t.Fatalf("work-once --claims git --list: %v", r)
	}
}

// Leases is the remote's lease refs: slug → oid.
func (f *Fleet) Leases(t testing.TB) map[string]string {
	t.Helper()
	out, err := exec.Command("git", "-C", f.Bare, "for-each-ref", "--format=%(objectname) %(refname)", LeaseRefs).Output()
	if err != nil {
		t.Fatalf("for-each-ref in %s: %v", f.Bare, err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if oid, ref, ok := strings.Cut(line, " "); ok {
			m[strings.TrimPrefix(ref, LeaseRefs)] = oid
		}
	}
	return m
}

// Daemon serves the fleet's folder with `git daemon --enable=receive-pack`
// on 127.0.0.1 and returns the bare repository's git:// URL; t is skipped
// when it cannot start.
func (f *Fleet) Daemon(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback port for git daemon: %v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	base := filepath.Dir(f.Bare)
	cmd := exec.Command("git", "daemon", "--export-all", "--enable=receive-pack", "--reuseaddr",
		"--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), "--base-path="+base, base)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Skipf("git daemon cannot start: %v", err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	url := fmt.Sprintf("git://127.0.0.1:%d/%s", port, filepath.Base(f.Bare))
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if exec.Command("git", "ls-remote", url).Run() == nil {
			return url
		}
	}
	t.Skipf("git daemon on 127.0.0.1:%d never answered", port)
	return ""
}

// ListJSON is the part of `work-once --list --json` these tests read.
type ListJSON struct {
	ViewReadAt string `json:"view_read_at"`
	Claims     string `json:"claims"`
	Plans      []struct {
		Rel   string `json:"rel"`
		Slug  string `json:"slug"`
		Lane  string `json:"lane"`
		Lease *struct {
			AgentID string `json:"agent_id"`
			HeldOn  string `json:"held_on"`
			Backend string `json:"backend"`
		} `json:"lease"`
	} `json:"plans"`
}

// List reads dir's --list --json.
func List(t testing.TB, dir, agent string) ListJSON {
	t.Helper()
	r := fwtest.Run(t, dir, "work-once", "--root", dir, "--agent-id", agent, "--list", "--json")
	if r.Code != 0 {
		t.Fatalf("--list --json: %v", r)
	}
	var out ListJSON
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("--list --json: %v\n%s", err, r.Stdout)
	}
	return out
}

// Holder is who --list says holds slug ("" for nobody).
func (l ListJSON) Holder(slug string) string {
	for _, p := range l.Plans {
		if p.Slug == slug && p.Lease != nil {
			return p.Lease.AgentID
		}
	}
	return ""
}

// SlugOf is the plan a printed path names.
func SlugOf(line string) string {
	return strings.TrimSuffix(filepath.Base(strings.TrimSpace(line)), ".md")
}

// Worker starts `work-once --run` on dir as host, with a short lease (a
// heartbeat every 3 s: shorter ones are lost on a loaded machine), its
// agent working until stopped.
func Worker(t *testing.T, dir, host, agent string) (*exec.Cmd, *testkit.LockedBuffer) {
	t.Helper()
	cmd := fwtest.Cmd(dir, []string{"FLEET_HOST=" + host}, "work-once", "--root", dir, "--agent-id", agent, "--run", "--once", "--lease-ttl", "9")
	out := &testkit.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return cmd, out
}

// Status is `watch status` on dir as host: its fleet rows, by "agent on host".
func Status(t *testing.T, dir, host string) map[string]string {
	t.Helper()
	r := fwtest.RunEnv(t, dir, []string{"FLEET_HOST=" + host}, "watch", "status", "--root", dir)
	if r.Code != 0 {
		t.Fatalf("watch status: %v", r)
	}
	rows := map[string]string{}
	in := false
	for _, line := range strings.Split(r.Stdout, "\n") {
		label, rest := strings.TrimSpace(line[:min(len(line), 13)]), strings.TrimSpace(line[min(len(line), 13):])
		switch {
		case label == "fleet":
			in = true
		case label != "":
			in = false
		}
		if name, words, ok := strings.Cut(rest, "  "); in && ok {
			rows[name] = words
		}
	}
	return rows
}
