package landing

import (
	"context"
	"os"
	"path/filepath"
	"syscall"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
)

// git runs git in dir and returns its trimmed stdout; any non-zero exit is
// an error carrying the first line git wrote to stderr.
func git(dir string, args ...string) (string, error) {
	return gitWith(nil, dir, args...)
}

func gitWith(env []string, dir string, args ...string) (string, error) {
	r, err := gitenv.Run(context.Background(), gitenv.Call{Dir: dir, Args: args, Env: env})
	return r.Text(), err
}

// isAncestor reports whether commit a is an ancestor of (or equal to) b.
func isAncestor(dir, a, b string) (bool, error) {
	r, err := gitenv.Run(context.Background(), gitenv.Call{Dir: dir, Args: []string{"merge-base", "--is-ancestor", a, b}})
	if err != nil && r.Code != 1 {
		return false, err
	}
	return r.Code == 0, nil
}

// revParse is the commit ref names, "" when there is none.
func revParse(dir, ref string) string {
	out, err := git(dir, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return ""
	}
	return out
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
	if name, err := git(project, "config", "user.name"); err == nil && name != "" {
		if email, err := git(project, "config", "user.email"); err == nil && email != "" {
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
