// Package testkit holds the test helpers several packages share: real
// processes and a counting wrapper around git.
package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

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
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		tb.Fatal(err)
	}
	path := os.Getenv("PATH")
	os.Setenv("PATH", bin+string(os.PathListSeparator)+path)
	defer os.Setenv("PATH", path)
	f()
	data, _ := os.ReadFile(count)
	return strings.Count(string(data), "\n")
}
