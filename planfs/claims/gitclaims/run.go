package gitclaims

import (
	"context"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
)

// identity is who every lease and move commit is by: the same on every
// machine, so nothing in a commit depends on who ran it but its lease JSON.
var identity = []string{
	"GIT_AUTHOR_NAME=fleetwatch", "GIT_AUTHOR_EMAIL=fleetwatch@localhost",
	"GIT_COMMITTER_NAME=fleetwatch", "GIT_COMMITTER_EMAIL=fleetwatch@localhost",
}

// runner runs git in one checkout, each command bounded by the backend's
// timeout (gitenv.Run kills a late push with everything it started: its
// pack-objects living on could still land a claim after its caller gave
// up on it).
type runner struct {
	dir     string
	timeout time.Duration
}

// run runs git args with stdin and extra environment; stdout comes back
// even on failure, and a non-zero exit is a *gitenv.Error carrying stderr.
func (r runner) run(ctx context.Context, stdin []byte, env []string, args ...string) ([]byte, error) {
	for try := 1; ; try++ {
		res, err := gitenv.Run(ctx, gitenv.Call{Dir: r.dir, Args: args, Env: env, Stdin: stdin, Timeout: r.timeout})
		if err == nil || try == worktreeTries || !worktreeRace(err) || ctx.Err() != nil {
			return res.Out, err
		}
		time.Sleep(time.Duration(try) * 50 * time.Millisecond)
	}
}

// worktreeTries bounds the tries of a command that met a worktree being
// made or removed.
const worktreeTries = 5

// worktreeRace reports whether git stopped at a linked worktree's admin
// folder half made or half removed by another process (`git worktree add`
// writes gitdir and commondir after making the folder): it read every
// worktree's HEAD before doing anything, so the command changed nothing
// and may run again.
func worktreeRace(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "/worktrees/") && (strings.Contains(msg, "failed to read") || strings.Contains(msg, "commondir") || strings.Contains(msg, "gitdir"))
}

// line runs git and returns its stdout's first line.
func (r runner) line(ctx context.Context, args ...string) (string, error) {
	out, err := r.run(ctx, nil, nil, args...)
	s, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(s), err
}
