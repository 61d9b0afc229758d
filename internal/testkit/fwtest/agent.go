package fwtest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// FakeAgent is the fake coding agent's binary (testkit.FakeAgent).
func FakeAgent(t testing.TB) string { return testkit.FakeAgent(t) }

// WithExecutor writes dir/endpoints.yaml with argv as the default executor.
// The folders of the files the fake agent records to (-record, -pidfile,
// -child, -daemon) are granted to it as sandbox_write, as an operator
// grants a path an agent needs.
func WithExecutor(t testing.TB, dir string, argv ...string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("endpoints:\n  - name: local\n    tier: mid\n    model: fake-1\nexecutor:\n")
	for _, a := range argv {
		q, _ := json.Marshal(a)
		b.WriteString("  - " + string(q) + "\n")
	}
	if grants := RecordDirs(argv); len(grants) > 0 {
		b.WriteString("sandbox_write:\n")
		for _, g := range grants {
			q, _ := json.Marshal(g)
			b.WriteString("  - " + string(q) + "\n")
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "endpoints.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Grant lets dir's agents write paths (endpoints.yaml's top-level
// sandbox_write), as an operator grants a folder an agent needs; call it
// after WithExecutor.
func Grant(t testing.TB, dir string, paths ...string) {
	t.Helper()
	p := filepath.Join(dir, "endpoints.yaml")
	text, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(text), "sandbox_write:") {
		t.Fatalf("%s grants paths already", p)
	}
	var b strings.Builder
	b.WriteString("sandbox_write:\n")
	for _, g := range paths {
		q, _ := json.Marshal(g)
		b.WriteString("  - " + string(q) + "\n")
	}
	if err := os.WriteFile(p, append(text, b.String()...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Uncontained sets `sandbox: off` in dir's fleetwatch.yaml, for a test of
// what the driver does when nothing stops an agent (a host without
// Landlock).
func Uncontained(t testing.TB, dir string) {
	t.Helper()
	p := filepath.Join(dir, "fleetwatch.yaml")
	old, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(old, []byte("sandbox: off\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// RecordDirs are the folders of the files a fake agent's argv tells it to
// write outside its worktree (-record, -pidfile, -child, -daemon,
// -running's own folder's parent).
func RecordDirs(argv []string) []string {
	var out []string
	for i := 0; i+1 < len(argv); i++ {
		switch argv[i] {
		case "-record", "-pidfile", "-child", "-daemon", "-running":
			if d := filepath.Dir(argv[i+1]); filepath.IsAbs(d) && !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	return out
}

func RunLease(t testing.TB, dir, rel string) model.Lease {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ".plans", ".leases", model.LeaseFileName(rel)))
	if err != nil {
		t.Fatal(err)
	}
	l, err := model.DecodeLease(data)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func StateOf(t testing.TB, dir, agent string) look.State {
	t.Helper()
	data, err := os.ReadFile(look.StatePath(dir, agent))
	if err != nil {
		t.Fatal(err)
	}
	var st look.State
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func WaitFor(t testing.TB, what string, limit time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func ReadPID(t testing.TB, file string) int {
	t.Helper()
	var pid int
	WaitFor(t, file, 20*time.Second, func() bool {
		data, err := os.ReadFile(file)
		pid, _ = strconv.Atoi(string(data))
		return err == nil && pid > 0
	})
	return pid
}

// Alive reports whether pid runs (testkit.Alive).
func Alive(pid int) bool { return testkit.Alive(pid) }

// Zombie reports whether pid has exited and waits for its parent to reap it.
func Zombie(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(data, ')')
	return i > 0 && i+2 < len(data) && data[i+2] == 'Z'
}

// GitOut runs git in dir and returns its trimmed stdout.
func GitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		t.Fatalf("git %v in %s: %v", args, dir, err)
	}
	return strings.TrimSpace(string(out))
}

// GitProject is a tree in a git repository with one commit.
func GitProject(t *testing.T, plans ...Plan) string {
	dir := NewTree(t, plans...)
	testkit.Git(t, dir, "init", "-q")
	testkit.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "init")
	return dir
}

// GitRepo makes a git repository with one commit on main.
func GitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	testkit.Git(t, dir, "init", "-q")
	testkit.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "init")
	return dir
}
