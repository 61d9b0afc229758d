// Package testkit holds the test helpers several packages share: real git
// repositories, real processes, a counting wrapper around git, and a
// stand-in worker driver.
package testkit

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Git runs git in dir as a test identity, without signing, and returns its
// output trimmed; a failure fails tb with what git said.
func Git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", "-C", dir}, args...)...)
	// No system or user config: a repository is the same on every machine.
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Repo makes a git repository in a new temporary folder with one commit
// (a README) on main.
func Repo(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	Git(tb, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("hello\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	Git(tb, dir, "add", "README")
	Git(tb, dir, "commit", "-q", "-m", "init")
	return dir
}

// DeadPID returns the pid of a process that has exited and been reaped.
func DeadPID(tb testing.TB) int {
	tb.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		tb.Fatal(err)
	}
	return cmd.Process.Pid
}

// GitRuns runs f with a wrapper named git first on PATH and returns how
// many times git was started meanwhile. Not for parallel tests: it changes
// the process's PATH while f runs.
func GitRuns(tb testing.TB, f func()) int {
	tb.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		tb.Fatal(err)
	}
	bin := tb.TempDir()
	count := filepath.Join(bin, "count")
	script := "#!/bin/sh\necho >> '" + count + "'\nexec '" + real + "' \"$@\"\n"
	WriteScript(tb, filepath.Join(bin, "git"), script)
	path := os.Getenv("PATH")
	os.Setenv("PATH", bin+string(os.PathListSeparator)+path)
	defer os.Setenv("PATH", path)
	f()
	data, _ := os.ReadFile(count)
	return strings.Count(string(data), "\n")
}

var fake struct {
	once sync.Once
	bin  string
	err  error
}

// FakeDriver builds, once per test binary, the stand-in for `fleetwatch
// work-once` in workers/testdata/fakedriver and returns its path. The
// test binary's TestMain calls RemoveFakeDriver when done.
func FakeDriver(tb testing.TB) string {
	tb.Helper()
	fake.once.Do(func() {
		fake.bin, fake.err = BuildProgram("github.com/fleetwatch/fleetwatch/workers/testdata/fakedriver", "fleetwatch")
		if fake.err != nil {
			fake.err = fmt.Errorf("building the fake driver: %v", fake.err)
		}
	})
	if fake.err != nil {
		tb.Fatal(fake.err)
	}
	return fake.bin
}

// RemoveFakeDriver removes what FakeDriver and FakeAgent built (all
// BuildProgram built).
func RemoveFakeDriver() { RemovePrograms() }

// Alive reports whether pid runs; a zombie is gone for our purposes, and
// /proc tells them apart.
func Alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// Paused reports whether pid is held where it is: stopped (T in
// /proc/PID/stat), or in a frozen cgroup (v2's cgroup.events, or v1's
// freezer.state), as a driver pauses a run.
func Paused(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 0 && f[0] == "T" {
		return true
	}
	groups, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	for _, line := range strings.Split(string(groups), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) < 3 {
			continue
		}
		switch {
		case parts[1] == "":
			for _, mount := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
				if ev, err := os.ReadFile(filepath.Join(mount, parts[2], "cgroup.events")); err == nil && strings.Contains(string(ev), "frozen 1") {
					return true
				}
			}
		case parts[1] == "freezer":
			if st, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/freezer", parts[2], "freezer.state")); err == nil && strings.TrimSpace(string(st)) == "FROZEN" {
				return true
			}
		}
	}
	return false
}

// KillGroup ends a detached test worker and its process group, for
// t.Cleanup: such a worker outlives the test binary otherwise.
func KillGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// hostileHooks are the hooks git may run in an operator's command.
var hostileHooks = []string{
	"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "pre-merge-commit",
	"post-checkout", "post-merge", "pre-push", "pre-rebase", "post-rewrite",
	"reference-transaction", "pre-auto-gc", "post-index-change", "push-to-checkout",
}

// HostileGitConfig makes dir's repository config run code, as an agent
// with write access to the shared git dir could: core.hooksPath names a
// folder of executable hooks, core.fsmonitor a script, diff.external and
// a textconv driver for every file another. Each appends a line to the
// sentinel file whose path it returns (outside the repository). It first
// proves the rig works: a plain git commit fills the sentinel, which is
// then emptied.
func HostileGitConfig(tb testing.TB, dir string) string {
	tb.Helper()
	root := tb.TempDir()
	sentinel := filepath.Join(root, "ran")
	hooks := filepath.Join(root, "hooks")
	if err := os.Mkdir(hooks, 0o755); err != nil {
		tb.Fatal(err)
	}
	script := func(path, name string) {
		body := "#!/bin/sh\necho \"" + name + " $*\" >> '" + sentinel + "'\nexit 0\n"
		WriteScript(tb, path, body)
	}
	for _, h := range hostileHooks {
		script(filepath.Join(hooks, h), h)
	}
	script(filepath.Join(root, "fsmonitor"), "fsmonitor")
	script(filepath.Join(root, "extdiff"), "external diff")
	script(filepath.Join(root, "textconv"), "textconv")
	Git(tb, dir, "config", "core.hooksPath", hooks)
	Git(tb, dir, "config", "core.fsmonitor", filepath.Join(root, "fsmonitor"))
	Git(tb, dir, "config", "diff.external", filepath.Join(root, "extdiff"))
	Git(tb, dir, "config", "diff.evil.textconv", filepath.Join(root, "textconv"))
	info := Git(tb, dir, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err := os.MkdirAll(filepath.Join(info, "info"), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(info, "info", "attributes"), []byte("* diff=evil\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	Git(tb, dir, "commit", "-q", "--allow-empty", "-m", "hooks armed")
	if data, _ := os.ReadFile(sentinel); len(data) == 0 {
		tb.Fatal("the hostile git config ran nothing on a plain git commit")
	}
	if err := os.WriteFile(sentinel, nil, 0o644); err != nil {
		tb.Fatal(err)
	}
	return sentinel
}

// NothingRan fails tb when the sentinel of HostileGitConfig has a line:
// code from the repository's config ran.
func NothingRan(tb testing.TB, sentinel, during string) {
	tb.Helper()
	if data, _ := os.ReadFile(sentinel); len(data) > 0 {
		tb.Errorf("%s ran the repository's code:\n%s", during, data)
	}
}

// WriteScript writes an executable file that this very process may run at
// once. Its write descriptor is open only while no fork can happen
// (syscall.ForkLock, held for reading: every fork holds it for writing), so
// no child a parallel test forks meanwhile inherits it, and the exec never
// fails with "text file busy" (ETXTBSY).
func WriteScript(tb testing.TB, path, body string) {
	tb.Helper()
	syscall.ForkLock.RLock()
	err := os.WriteFile(path, []byte(body), 0o755)
	syscall.ForkLock.RUnlock()
	if err != nil {
		tb.Fatal(err)
	}
}

var fakeAgentBin = sync.OnceValues(func() (string, error) {
	return BuildProgram("github.com/fleetwatch/fleetwatch/internal/testkit/fakeagent", "")
})

// FakeAgent builds the fake coding agent (internal/testkit/fakeagent)
// once per test binary and returns its path.
func FakeAgent(t testing.TB) string {
	t.Helper()
	bin, err := fakeAgentBin()
	if err != nil {
		t.Fatalf("building the fake agent: %v", err)
	}
	return bin
}

// LockedBuffer is a child process's output, read by the test while the
// process still writes it.
type LockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is what was written so far.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Within fails tb when f has not returned after five seconds: for calls
// that must never block (a FIFO among the files, a runaway writer).
func Within(tb testing.TB, what string, f func()) {
	tb.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		tb.Fatalf("%s: still blocked after 5 s", what)
	}
}

// Project is an empty temporary folder for a project, its path with the
// symlinks resolved (macOS's /var is one), as the workers record paths.
func Project(tb testing.TB) string {
	tb.Helper()
	dir, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}

// FreePorts finds n consecutive ports that nothing listens on now, below
// the kernel's ephemeral range so outgoing connections do not take them,
// and returns the first.
func FreePorts(tb testing.TB, n int) int {
	tb.Helper()
	for range 100 {
		lo := 20000 + rand.IntN(10000)
		ok := true
		for p := lo; p < lo+n && ok; p++ {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if ok = err == nil; ok {
				l.Close()
			}
		}
		if ok {
			return lo
		}
	}
	tb.Fatalf("no %d consecutive free ports found", n)
	return 0
}

// AnchorRegistry checks dir's var/worktrees/registry.json is what anchor
// writes and reads: an object with project and agents, each agent exactly
// anchor's five string keys, keys sorted, indent 2.
func AnchorRegistry(tb testing.TB, dir string) {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "var", "worktrees", "registry.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var reg map[string]json.RawMessage
	if err := json.Unmarshal(data, &reg); err != nil || len(reg) != 2 || reg["project"] == nil || reg["agents"] == nil {
		tb.Fatalf("registry %s: %v", data, err)
	}
	var agents map[string]map[string]any
	if err := json.Unmarshal(reg["agents"], &agents); err != nil {
		tb.Fatalf("agents: %v", err)
	}
	for id, e := range agents {
		if len(e) != 5 {
			tb.Errorf("%s has keys %v, want anchor's five", id, e)
		}
		for _, k := range []string{"agent_id", "path", "branch", "integration", "project"} {
			if _, ok := e[k].(string); !ok {
				tb.Errorf("%s.%s is %v, want a string", id, k, e[k])
			}
		}
	}
	var again map[string]any
	json.Unmarshal(data, &again)
	want, _ := json.MarshalIndent(again, "", "  ") // Go sorts map keys
	if string(want)+"\n" != string(data) {
		tb.Errorf("registry is not sorted with indent 2:\n%s", data)
	}
}
