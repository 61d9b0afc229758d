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
	res, err := gitenv.Run(ctx, gitenv.Call{Dir: r.dir, Args: args, Env: env, Stdin: stdin, Timeout: r.timeout})
	return res.Out, err
}

// line runs git and returns its stdout's first line.
func (r runner) line(ctx context.Context, args ...string) (string, error) {
	out, err := r.run(ctx, nil, nil, args...)
	s, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(s), err
}
