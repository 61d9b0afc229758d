package workers

import (
	"context"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
)

// gitTimeout bounds one git call; worktree adds on big repos take seconds.
const gitTimeout = gitenv.DefaultTimeout

// git runs git in dir and returns its trimmed stdout; a failure carries the
// first line git wrote to stderr.
func git(dir string, args ...string) (string, error) {
	return runGit(gitTimeout, nil, dir, args...)
}

// runGit is git bounded by timeout, with extra environment variables.
func runGit(timeout time.Duration, env []string, dir string, args ...string) (string, error) {
	r, err := gitenv.Run(context.Background(), gitenv.Call{Dir: dir, Args: args, Env: env, Timeout: timeout})
	if err != nil {
		return "", err
	}
	return r.Text(), nil
}

// hasRef reports whether ref (a branch or remote-tracking name) exists.
func hasRef(dir, ref string) bool {
	_, err := git(dir, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	return err == nil
}
