package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the fleetwatch binary: with this variable set it
// runs the command line it was given, so CLI tests use real child processes.
const asFleetwatch = "FLEETWATCH_TEST_AS_MAIN"

// barrierEnv names a file a child waits for before it runs, so racing
// workers start together.
const barrierEnv = "FLEETWATCH_TEST_BARRIER"

func TestMain(m *testing.M) {
	if os.Getenv(asFleetwatch) == "1" {
		if b := os.Getenv(barrierEnv); b != "" {
			os.WriteFile(fmt.Sprintf("%s.ready.%d", b, os.Getpid()), nil, 0o644)
			for {
				if _, err := os.Stat(b); err == nil {
					break
				}
				time.Sleep(200 * time.Microsecond)
			}
		}
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	code := m.Run()
	benchTrees.Remove()
	os.Exit(code)
}

// result is what one fleetwatch process did.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// fwCmd builds a real fleetwatch process (this test binary) running args in dir.
func fwCmd(dir string, env []string, args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	// A -race child otherwise sleeps a second before exiting.
	cmd.Env = append(append(outsideFleet(os.Environ()), asFleetwatch+"=1", "USER=tester", "GORACE=atexit_sleep_ms=0"), env...)
	return cmd
}

// outsideFleet drops the FLEET_* variables a driver gives its agent, so the
// tests behave the same when an agent runs them.
func outsideFleet(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "FLEET_") {
			out = append(out, kv)
		}
	}
	return out
}

// fw runs fleetwatch with args in dir and returns what it did.
func fw(t testing.TB, dir string, args ...string) result {
	t.Helper()
	return fwEnv(t, dir, nil, args...)
}

func fwEnv(t testing.TB, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := fwCmd(dir, env, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = -int(ws.Signal()) // killed: minus the signal number
		}
	} else if err != nil {
		t.Fatalf("fleetwatch %v: %v", args, err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// plan is a compact plan description for newTree.
type plan struct {
	rel    string // e.g. "features/a.md"
	fields string // header bullets, "Key: value" separated by ";"
	body   string
	age    time.Duration // mtime this long ago, so creation order is explicit
}

// newTree makes a project with a scaffolded .plans/ and the given plans; plans
// without an age get increasing ages in list order (earlier = older).
func newTree(t testing.TB, plans ...plan) string {
	t.Helper()
	dir := t.TempDir()
	if r := fw(t, dir, "scaffold", dir); r.code != 0 {
		t.Fatalf("scaffold: %v", r)
	}
	for i, p := range plans {
		writePlan(t, dir, p, time.Duration(len(plans)-i)*time.Minute)
	}
	return dir
}

func writePlan(t testing.TB, dir string, p plan, defaultAge time.Duration) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "# Plan: %s\n\n", strings.TrimSuffix(filepath.Base(p.rel), ".md"))
	if p.fields != "" {
		for _, f := range strings.Split(p.fields, ";") {
			k, v, _ := strings.Cut(f, ":")
			fmt.Fprintf(&b, "- **%s:** %s\n", strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	b.WriteString("\n## Goal\nDo it.\n\n## Done when\n- done\n")
	b.WriteString(p.body)
	path := filepath.Join(dir, ".plans", filepath.FromSlash(p.rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	age := p.age
	if age == 0 {
		age = defaultAge
	}
	mt := time.Now().Add(-age)
	if err := os.Chtimes(path, mt, mt); err != nil {
		t.Fatal(err)
	}
}

func exists(dir, rel string) bool {
	_, err := os.Stat(filepath.Join(dir, ".plans", filepath.FromSlash(rel)))
	return err == nil
}

func TestNoCommand(t *testing.T) {
	// No command opens the UI, which needs a tree and a terminal.
	if r := fw(t, t.TempDir()); r.code != exitError || !strings.Contains(r.stderr, "no .plans/") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("no command, no tree: %v", r)
	}
	root := newTree(t)
	if r := fw(t, root); r.code != exitError || !strings.Contains(r.stderr, "needs a terminal") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("no command, no terminal: %v", r)
	}
	if r := fw(t, root, "help"); r.code != exitOK || !strings.Contains(r.stdout, "work-once") || !strings.Contains(r.stdout, "demo") {
		t.Fatalf("help: %v", r)
	}
	if r := fw(t, t.TempDir(), "frobnicate"); r.code != exitError || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("unknown command: %v", r)
	}
}

// openBarrier waits until n processes are waiting at barrier, then releases them.
func openBarrier(t testing.TB, barrier string, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ready, _ := filepath.Glob(barrier + ".ready.*")
		if len(ready) >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d processes reached the barrier", len(ready), n)
		}
		time.Sleep(time.Millisecond)
	}
	if err := os.WriteFile(barrier, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}
