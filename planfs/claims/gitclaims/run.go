package gitclaims

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"fleetwatch/internal/gitenv"
)

// identity is who every lease and move commit is by: the same on every
// machine, so nothing in a commit depends on who ran it but its lease JSON.
var identity = []string{
	"GIT_AUTHOR_NAME=fleetwatch", "GIT_AUTHOR_EMAIL=fleetwatch@localhost",
	"GIT_COMMITTER_NAME=fleetwatch", "GIT_COMMITTER_EMAIL=fleetwatch@localhost",
}

// runner runs git in one checkout, each command in its own process group
// with a deadline: a killed push whose pack-objects lived on could still
// land a claim seconds after its caller gave up on it.
type runner struct {
	dir     string
	timeout time.Duration
}

// errTimedOut is a git command killed at its deadline: what it did to the
// remote is unknown until it is asked.
var errTimedOut = errors.New("timed out")

// gitError is a git command that exited non-zero.
type gitError struct {
	args   []string
	code   int
	stderr string
}

func (e *gitError) Error() string {
	return fmt.Sprintf("git %s: %s", e.args[0], lastLine(e.stderr, fmt.Sprintf("exit status %d", e.code)))
}

// lastLine is the last non-empty line of s, else fallback.
func lastLine(s, fallback string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return strings.TrimPrefix(strings.TrimPrefix(l, "fatal: "), "error: ")
		}
	}
	return fallback
}

// run runs git args with stdin and extra environment; stdout comes back
// whole, and a non-zero exit is a *gitError carrying stderr.
func (r runner) run(ctx context.Context, stdin []byte, env []string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	cmd := gitenv.Command(ctx, r.dir, args...)
	cmd.Env = append(append(cmd.Env, "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=true", "SSH_ASKPASS=true"), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		// Whatever is left of its group goes too.
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		return out.Bytes(), fmt.Errorf("git %s: %w after %v", args[0], errTimedOut, r.timeout)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.Bytes(), &gitError{args: args, code: ee.ExitCode(), stderr: errb.String()}
	}
	if err != nil {
		return out.Bytes(), fmt.Errorf("git %s: %v", args[0], err)
	}
	return out.Bytes(), nil
}

// line runs git and returns its stdout's first line.
func (r runner) line(ctx context.Context, args ...string) (string, error) {
	out, err := r.run(ctx, nil, nil, args...)
	s, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(s), err
}
