package giteatest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Work is a local git work tree for a test to make commits in and push
// them to the server.
type Work struct {
	tb  testing.TB
	Dir string
	// Env is added to every git command (a forge's GitEnv, say).
	Env []string
}

// NewWork is an empty work tree on branch main, with a committer set and
// no user or system git config read.
func NewWork(tb testing.TB) *Work {
	tb.Helper()
	w := &Work{tb: tb, Dir: tb.TempDir()}
	w.Git("init", "-q", "-b", "main")
	return w
}

// Git runs git in the work tree and returns its output; a failure fails
// the test.
func (w *Work) Git(args ...string) string {
	w.tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = w.Dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=fleetwatch test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=fleetwatch test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0")
	cmd.Env = append(cmd.Env, w.Env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// Commit writes content to file (relative to the tree), commits it on
// the current branch and returns the commit.
func (w *Work) Commit(file, content, msg string) string {
	w.tb.Helper()
	path := filepath.Join(w.Dir, file)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		w.tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		w.tb.Fatal(err)
	}
	w.Git("add", "--", file)
	w.Git("commit", "-q", "-m", msg)
	return w.Git("rev-parse", "HEAD")
}
