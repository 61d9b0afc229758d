package landing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"fleetwatch/internal/gitenv"
)

// gitTimeout bounds one git call; a push to a slow remote takes seconds.
const gitTimeout = 2 * time.Minute

// gitResult is one git call's output and exit status, for the commands
// whose exit 1 is an answer (merge-tree's conflict, merge-base's "no").
type gitResult struct {
	out  string
	code int
}

// runGit runs git in dir with extra environment; a non-zero exit is not an
// error here, only failing to run or the timeout.
func runGit(env []string, dir string, args ...string) (gitResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := gitenv.Command(ctx, dir, args...)
	cmd.Env = append(append(cmd.Env, "GIT_TERMINAL_PROMPT=0"), env...)
	cmd.WaitDelay = time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return gitResult{}, fmt.Errorf("git %s: no answer within %v", args[0], gitTimeout)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return gitResult{}, fmt.Errorf("git %s: %v", args[0], err)
	}
	r := gitResult{out: strings.TrimSpace(out.String())}
	if ee != nil {
		r.code = ee.ExitCode()
		if r.code > 1 || r.code < 0 {
			return r, fmt.Errorf("git %s: %s", args[0], firstLine(errb.String(), err))
		}
		if r.out == "" {
			r.out = strings.TrimSpace(errb.String())
		}
	}
	return r, nil
}

// git runs git in dir and returns its trimmed stdout; any non-zero exit is
// an error carrying the first line git wrote.
func git(dir string, args ...string) (string, error) {
	return gitWith(nil, dir, args...)
}

func gitWith(env []string, dir string, args ...string) (string, error) {
	r, err := runGit(env, dir, args...)
	if err != nil {
		return "", err
	}
	if r.code != 0 {
		return "", fmt.Errorf("git %s: %s", args[0], firstLine(r.out, errors.New("exit 1")))
	}
	return r.out, nil
}

func firstLine(s string, err error) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return err.Error()
	}
	return s
}

// isAncestor reports whether commit a is an ancestor of (or equal to) b.
func isAncestor(dir, a, b string) (bool, error) {
	r, err := runGit(nil, dir, "merge-base", "--is-ancestor", a, b)
	if err != nil {
		return false, err
	}
	return r.code == 0, nil
}

// revParse is the commit ref names, "" when there is none.
func revParse(dir, ref string) string {
	r, err := runGit(nil, dir, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil || r.code != 0 {
		return ""
	}
	return r.out
}

// commonDir is the repository's git common dir (shared by every worktree),
// absolute.
func commonDir(project string) (string, error) {
	d, err := git(project, "rev-parse", "--git-common-dir")
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(d) {
		d = filepath.Join(project, d)
	}
	return d, nil
}

// identity is the environment for commits fleetwatch makes: the project's
// own user when git knows one, else a fixed identity, so commit-tree never
// fails on a machine with no user.name.
func identity(project string) []string {
	if r, err := runGit(nil, project, "config", "user.name"); err == nil && r.code == 0 && r.out != "" {
		if r, err := runGit(nil, project, "config", "user.email"); err == nil && r.code == 0 && r.out != "" {
			return nil
		}
	}
	return []string{
		"GIT_AUTHOR_NAME=fleetwatch", "GIT_AUTHOR_EMAIL=fleetwatch@localhost",
		"GIT_COMMITTER_NAME=fleetwatch", "GIT_COMMITTER_EMAIL=fleetwatch@localhost",
	}
}

// failpointEnv is planfs's FLEETWATCH_FAILPOINT: a landing step named there
// kills the process with SIGKILL, so tests can prove a crash at any step
// loses nothing. Steps: land:built, land:checked, land:cas, land:moved,
// land:pinned.
var failpointName = os.Getenv("FLEETWATCH_FAILPOINT")

func failpoint(step string) {
	if failpointName != "" && failpointName == step {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
}
