package workers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"fleetwatch/internal/gitenv"
)

// gitTimeout bounds one git call; worktree adds on big repos take seconds.
const gitTimeout = 2 * time.Minute

// git runs git in dir and returns its trimmed stdout; a failure carries the
// first line git wrote to stderr.
func git(dir string, args ...string) (string, error) {
	return runGit(gitTimeout, nil, dir, args...)
}

// runGit is git bounded by timeout, with extra environment variables.
func runGit(timeout time.Duration, env []string, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := gitenv.Command(ctx, dir, args...)
	cmd.Env = append(cmd.Env, env...)
	// A child that outlives a killed git (a hook, an fsmonitor) must not keep
	// Wait blocked on its pipes.
	cmd.WaitDelay = time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "", fmt.Errorf("git %s: no answer within %v", args[0], timeout)
		}
		msg := strings.TrimSpace(errb.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", args[0], msg)
	}
	return strings.TrimSpace(out.String()), nil
}

// hasRef reports whether ref (a branch or remote-tracking name) exists.
func hasRef(dir, ref string) bool {
	_, err := git(dir, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	return err == nil
}
