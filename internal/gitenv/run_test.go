package gitenv

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// newRepo is a repository with one commit holding big (1 MiB) and small.
func newRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "root"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(repo, "big"), bytes.Repeat([]byte("0123456789abcde\n"), 1<<16), 0o644)
	os.WriteFile(filepath.Join(repo, "small"), []byte("hi\n"), 0o644)
	for _, args := range [][]string{
		{"add", "big", "small"},
		{"-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "-m", "files"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return repo
}

// gone waits up to 3s for pid to be dead (or a zombie nobody reaped).
func gone(pid int) bool {
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
			if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
				return true
			}
		}
	}
	return false
}

// readPid waits for a shell alias to have written its child's pid.
func readPid(t *testing.T, path string) int {
	t.Helper()
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err == nil {
				return pid
			}
		}
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

// A git that hangs (here a shell alias, git's own way of running a
// program, waiting on a sleep it started) is killed at its deadline with
// everything it started: the whole process group.
func TestRunTimeoutKillsTheGroup(t *testing.T) {
	repo := newRepo(t)
	pidfile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	r, err := Run(context.Background(), Call{
		Dir:     repo,
		Args:    []string{"-c", "alias.hang=!sleep 30 & echo $! >" + pidfile + "; wait", "hang"},
		Timeout: 300 * time.Millisecond,
	})
	took := time.Since(start)
	var ge *Error
	if !errors.As(err, &ge) || ge.Timeout == 0 || r.Code != -1 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %+v, %v; want a timeout", r, err)
	}
	if want := "git hang: no answer within 300ms"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if took > 3*time.Second {
		t.Errorf("took %v", took)
	}
	if pid := readPid(t, pidfile); !gone(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the sleep git started (pid %d) outlived the timeout", pid)
	}
}

// Cancelling the caller's context stops git the same way, and says so.
func TestRunCancelKillsTheGroup(t *testing.T) {
	repo := newRepo(t)
	pidfile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Call{Dir: repo, Args: []string{"-c", "alias.hang=!sleep 30 & echo $! >" + pidfile + "; wait", "hang"}})
		done <- err
	}()
	pid := readPid(t, pidfile)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || err.Error() != "git hang: context canceled" {
			t.Errorf("err %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if !gone(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the sleep git started (pid %d) outlived the cancel", pid)
	}
}

// A child that outlives a git that exited 0, holding its stdout, does not
// hold Run past WaitDelay, and goes with the group.
func TestRunChildKeepingThePipes(t *testing.T) {
	repo := newRepo(t)
	pidfile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	r, err := Run(context.Background(), Call{Dir: repo, Args: []string{"-c", "alias.linger=!echo out; sleep 30 & echo $! >" + pidfile, "linger"}})
	if err != nil || r.Text() != "out" || time.Since(start) > 4*time.Second {
		t.Errorf("got %q, %v after %v", r.Out, err, time.Since(start))
	}
	if pid := readPid(t, pidfile); !gone(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the lingering child (pid %d) lives on", pid)
	}
}

// Limit keeps the first bytes of a big output and stops there, without
// an error; under the limit nothing changes.
func TestRunLimit(t *testing.T) {
	repo := newRepo(t)
	r, err := Run(context.Background(), Call{Dir: repo, Args: []string{"cat-file", "blob", "HEAD:big"}, Limit: 1000})
	if err != nil || !r.Truncated || len(r.Out) != 1000 || !bytes.HasPrefix(r.Out, []byte("0123456789abcde\n")) {
		t.Errorf("capped: %d bytes, truncated %v, %v", len(r.Out), r.Truncated, err)
	}
	r, err = Run(context.Background(), Call{Dir: repo, Args: []string{"cat-file", "--batch"}, Stdin: []byte("HEAD:small\n"), Limit: 1000})
	if err != nil || r.Truncated || !strings.HasSuffix(string(r.Out), " blob 3\nhi\n\n") {
		t.Errorf("under the cap: %q, truncated %v, %v", r.Out, r.Truncated, err)
	}
	r, err = Run(context.Background(), Call{Dir: repo, Args: []string{"cat-file", "blob", "HEAD:big"}})
	if err != nil || r.Truncated || len(r.Out) != 1<<20 {
		t.Errorf("no cap: %d bytes, truncated %v, %v", len(r.Out), r.Truncated, err)
	}
}

// A non-zero exit is an *Error with git's code, in the Result too, so an
// exit that answers (merge-base --is-ancestor's 1) tells from a failure;
// its text is the subcommand and stderr's first line.
func TestRunExitCodes(t *testing.T) {
	repo := newRepo(t)
	r, err := Run(context.Background(), Call{Dir: repo, Args: []string{"merge-base", "--is-ancestor", "HEAD", "HEAD~1"}})
	var ge *Error
	if !errors.As(err, &ge) || ge.Code != 1 || r.Code != 1 || err.Error() != "git merge-base: exit status 1" {
		t.Errorf("is-ancestor no: %+v, %v", r, err)
	}
	if r, err := Run(context.Background(), Call{Dir: repo, Args: []string{"merge-base", "--is-ancestor", "HEAD~1", "HEAD"}}); err != nil || r.Code != 0 {
		t.Errorf("is-ancestor yes: %+v, %v", r, err)
	}
	r, err = Run(context.Background(), Call{Dir: repo, Args: []string{"-c", "core.quotePath=false", "rev-parse", "--verify", "--end-of-options", "nosuch"}})
	if r.Code != 128 || err == nil || err.Error() != "git rev-parse: fatal: Needed a single revision" {
		t.Errorf("a refusal: %+v, %v", r, err)
	}
	// Several lines on stderr: the first one speaks.
	_, err = Run(context.Background(), Call{Dir: repo, Args: []string{"-c", "alias.two=!echo one >&2; echo two >&2; exit 3", "two"}})
	if !errors.As(err, &ge) || ge.Code != 3 || err.Error() != "git two: one" || ge.Stderr != "one\ntwo\n" {
		t.Errorf("two lines: %v (%+v)", err, ge)
	}
}

// Run's git finds its repository by Dir alone, whatever the caller's
// environment says, and never prompts; Env wins over the defaults.
func TestRunEnvironment(t *testing.T) {
	repo := newRepo(t)
	t.Setenv("GIT_DIR", filepath.Join(t.TempDir(), "elsewhere"))
	t.Setenv("GIT_INDEX_FILE", "/elsewhere/index")
	t.Setenv("GIT_TERMINAL_PROMPT", "1")
	t.Setenv("LC_ALL", "de_DE.UTF-8")
	r, err := Run(context.Background(), Call{Dir: repo, Args: []string{"rev-parse", "--absolute-git-dir"}})
	if real, _ := filepath.EvalSymlinks(filepath.Join(repo, ".git")); err != nil || r.Text() != real {
		t.Errorf("git dir %q, %v; want %s", r.Text(), err, real)
	}
	r, err = Run(context.Background(), Call{Dir: repo, Args: []string{"-c", "alias.env=!env", "env"}, Env: []string{"X_EXTRA=1"}})
	if err != nil {
		t.Fatal(err)
	}
	env := "\n" + string(r.Out)
	for _, want := range []string{"\nLC_ALL=C\n", "\nGIT_TERMINAL_PROMPT=0\n", "\nGIT_ASKPASS=true\n", "\nGIT_PAGER=cat\n", "\nX_EXTRA=1\n"} {
		if !strings.Contains(env, want) {
			t.Errorf("%q missing from git's environment", strings.TrimSpace(want))
		}
	}
	if strings.Contains(env, "\nGIT_INDEX_FILE=") || strings.Contains(env, "elsewhere") {
		t.Errorf("a locating variable reached git:\n%s", env)
	}
	r, _ = Run(context.Background(), Call{Dir: repo, Args: []string{"-c", "alias.env=!env", "env"}, Env: []string{"LC_ALL=POSIX"}})
	if !strings.Contains("\n"+string(r.Out), "\nLC_ALL=POSIX\n") {
		t.Error("the caller's Env did not win")
	}
}
