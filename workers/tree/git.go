package tree

import (
	"context"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
)

// GitTimeout bounds one git call; worktree adds on big repos take seconds.
const GitTimeout = gitenv.DefaultTimeout

// Git runs git in dir and returns its trimmed stdout; a failure carries the
// first line git wrote to stderr.
func Git(dir string, args ...string) (string, error) {
	return RunGit(GitTimeout, nil, dir, args...)
}

// RunGit is git bounded by timeout, with extra environment variables.
func RunGit(timeout time.Duration, env []string, dir string, args ...string) (string, error) {
	r, err := gitenv.Run(context.Background(), gitenv.Call{Dir: dir, Args: args, Env: env, Timeout: timeout})
	if err != nil {
		return "", err
	}
	return r.Text(), nil
}

// HasRef reports whether ref (a branch or remote-tracking name) exists.
func HasRef(dir, ref string) bool {
	_, err := Git(dir, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	return err == nil
}
