// Package fwtest is the kit for whole-program tests of the fleetwatch
// command line: the test binary doubles as fleetwatch (Main), and the
// helpers run it as a real child process on plan trees, lease files and git
// repositories they build. Only tests import it.
package fwtest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
)

// AsFleetwatch is set to 1 in a child's environment to make the test binary
// run the command line it was given.
const AsFleetwatch = "FLEETWATCH_TEST_AS_MAIN"

// The exit codes of fleetwatch's command line.
const (
	ExitOK      = 0
	ExitNothing = 1 // nothing to do
	ExitError   = 2 // an error or a refusal, one line on stderr
)

// BarrierEnv names a file a child waits for before it runs, so racing
// workers start together.
const BarrierEnv = "FLEETWATCH_TEST_BARRIER"

// Main is a whole-program test package's TestMain: as a child (AsFleetwatch
// set) it waits at the barrier if one is given and runs fleetwatch (the
// command line entry, cli.Main, passed in so package cli's own tests can use
// the kit too); otherwise it runs the tests, then cleanup, removes the
// programs Program built, and exits with their code.
func Main(m *testing.M, fleetwatch func(args []string, stdout, stderr io.Writer) int, cleanup ...func()) {
	if os.Getenv(AsFleetwatch) == "1" {
		if b := os.Getenv(BarrierEnv); b != "" {
			os.WriteFile(fmt.Sprintf("%s.ready.%d", b, os.Getpid()), nil, 0o644)
			for {
				if _, err := os.Stat(b); err == nil {
					break
				}
				time.Sleep(200 * time.Microsecond)
			}
		}
		os.Exit(fleetwatch(os.Args[1:], os.Stdout, os.Stderr))
	}
	code := m.Run()
	for _, f := range cleanup {
		f()
	}
	removePrograms()
	os.Exit(code)
}

// MainInMemory is Main with the test binary's temporary folders on a
// tmpfs (testkit.MemTemp), for packages whose tests contain no agent. A
// child keeps the TMPDIR its parent gave it.
func MainInMemory(m *testing.M, fleetwatch func(args []string, stdout, stderr io.Writer) int, cleanup ...func()) {
	if os.Getenv(AsFleetwatch) != "1" {
		cleanup = append(cleanup, testkit.MemTemp())
	}
	Main(m, fleetwatch, cleanup...)
}

// Result is what one fleetwatch process did.
type Result struct {
	Code           int
	Stdout, Stderr string
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
}

// Cmd builds a real fleetwatch process (this test binary) running args in dir.
func Cmd(dir string, env []string, args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	// A -race child otherwise sleeps a second before exiting.
	cmd.Env = append(append(outsideFleet(os.Environ()), AsFleetwatch+"=1", "USER=tester", "GORACE=atexit_sleep_ms=0"), env...)
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

// Run runs fleetwatch with args in dir and returns what it did.
func Run(t testing.TB, dir string, args ...string) Result {
	t.Helper()
	return RunEnv(t, dir, nil, args...)
}

// RunEnv is Run with env added to the child's environment.
func RunEnv(t testing.TB, dir string, env []string, args ...string) Result {
	t.Helper()
	return runCmd(t, Cmd(dir, env, args...), args)
}

// Exe is the test binary's path, the fleetwatch a written unit runs.
func Exe(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// OpenBarrier waits until n processes are waiting at barrier, then releases them.
func OpenBarrier(t testing.TB, barrier string, n int) {
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

// Want fails t unless r exited with code.
func Want(t testing.TB, r Result, code int) {
	t.Helper()
	if r.Code != code {
		t.Fatalf("want exit %d, got %v", code, r)
	}
}

// OneLineError checks r is a hard error: exit 2 and exactly one
// `fleetwatch: ` line on stderr naming each of names, with no crash.
func OneLineError(t testing.TB, r Result, names ...string) {
	t.Helper()
	if r.Code != 2 {
		t.Errorf("want exit 2, got %v", r)
	}
	if !strings.HasPrefix(r.Stderr, "fleetwatch: ") || strings.Count(r.Stderr, "\n") != 1 || !strings.HasSuffix(r.Stderr, "\n") {
		t.Errorf("want exactly one `fleetwatch: ` line on stderr, got %q", r.Stderr)
	}
	for _, bad := range []string{"panic", "goroutine ", ".go:"} {
		if strings.Contains(r.Stderr, bad) {
			t.Errorf("stderr looks like a crash (%q): %q", bad, r.Stderr)
		}
	}
	for _, n := range names {
		if !strings.Contains(r.Stderr, n) {
			t.Errorf("stderr does not name %q: %q", n, r.Stderr)
		}
	}
}
