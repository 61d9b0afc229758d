package workers

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"fleetwatch/internal/gitenv"
)

// gitTimeout bounds one git call; worktree adds on big repos take seconds.
const gitTimeout = 2 * time.Minute

// git runs git in dir and returns its trimmed stdout; a failure carries the
// first line git wrote to stderr.
func git(dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = gitenv.Env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
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
