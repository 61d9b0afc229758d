package gitenv

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnvDropsLocatingVariables(t *testing.T) {
	t.Setenv("GIT_DIR", "/elsewhere/.git")
	t.Setenv("GIT_INDEX_FILE", "/elsewhere/index")
	t.Setenv("GIT_AUTHOR_NAME", "kept")
	env := strings.Join(Env("GIT_OPTIONAL_LOCKS=0"), "\n")
	for _, gone := range []string{"GIT_DIR=", "GIT_INDEX_FILE="} {
		if strings.Contains(env, gone) {
			t.Errorf("%s survived", gone)
		}
	}
	for _, kept := range []string{"GIT_AUTHOR_NAME=kept", "GIT_OPTIONAL_LOCKS=0"} {
		if !strings.Contains(env, kept) {
			t.Errorf("%s lost", kept)
		}
	}
}

func TestArgsTurnsOffWhatRunsCode(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"rev-parse", "HEAD"}, "--no-pager -c core.hooksPath=/dev/null -c core.fsmonitor=false rev-parse HEAD"},
		{[]string{"diff", "a", "b"}, "--no-pager -c core.hooksPath=/dev/null -c core.fsmonitor=false diff --no-ext-diff --no-textconv a b"},
		{[]string{"-C", "/p", "-c", "core.quotePath=false", "log", "-1"}, "--no-pager -c core.hooksPath=/dev/null -c core.fsmonitor=false -C /p -c core.quotePath=false log --no-ext-diff --no-textconv -1"},
		{[]string{"-C", "/p"}, "--no-pager -c core.hooksPath=/dev/null -c core.fsmonitor=false -C /p"},
		{nil, "--no-pager -c core.hooksPath=/dev/null -c core.fsmonitor=false"},
	} {
		if got := strings.Join(Args(tc.in...), " "); got != tc.want {
			t.Errorf("Args(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestGitEnvRunsNoProgram(t *testing.T) {
	t.Setenv("GIT_EXTERNAL_DIFF", "/tmp/evil")
	t.Setenv("GIT_PAGER", "/tmp/evil")
	t.Setenv("GIT_DIR", "/elsewhere/.git")
	env := "\n" + strings.Join(GitEnv("X=1"), "\n") + "\n"
	for _, gone := range []string{"GIT_EXTERNAL_DIFF=", "GIT_PAGER=/tmp/evil", "GIT_DIR="} {
		if strings.Contains(env, gone) {
			t.Errorf("%s survived", gone)
		}
	}
	for _, kept := range []string{"\nGIT_PAGER=cat\n", "\nX=1\n"} {
		if !strings.Contains(env, kept) {
			t.Errorf("%q missing", kept)
		}
	}
}

// A worktree's .git file is its agent's to write: pointed at a git dir of
// the agent's making, it must not take the operator's git there. Git in a
// linked worktree follows the repository's own record of it.
func TestCommandFollowsTheRepositorysRecordOfAWorktree(t *testing.T) {
	repo := t.TempDir()
	run := func(dir string, args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run(repo, "init", "-q", "-b", "main")
	run(repo, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "init")
	wt := filepath.Join(repo, "var", "worktrees", "w1")
	run(repo, "worktree", "add", "-q", "-b", "feature/x", wt)

	branch := func() (string, error) {
		out, err := Command(context.Background(), filepath.Join(wt), "rev-parse", "--abbrev-ref", "HEAD").CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if b, err := branch(); err != nil || b != "feature/x" {
		t.Fatalf("before: %q %v", b, err)
	}
	// The agent makes a repository of its own in its worktree and points
	// the link at it.
	fake := filepath.Join(wt, ".fake")
	run(wt, "init", "-q", "-b", "evil", "--separate-git-dir", fake, filepath.Join(t.TempDir(), "scratch"))
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+fake+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := branch(); err != nil || b != "feature/x" {
		t.Errorf("after the link moved: %q %v, want feature/x", b, err)
	}
	// A worktree the repository never made is refused, not believed.
	stray := filepath.Join(repo, "var", "worktrees", "stray")
	os.MkdirAll(stray, 0o755)
	os.WriteFile(filepath.Join(stray, ".git"), []byte("gitdir: "+fake+"\n"), 0o644)
	if out, err := Command(context.Background(), stray, "rev-parse", "--abbrev-ref", "HEAD").CombinedOutput(); err == nil {
		t.Errorf("an unregistered worktree was believed: %s", out)
	}
}

// A project reached through a symlink still has its worktrees found: git
// records real paths.
func TestPinThroughASymlink(t *testing.T) {
	real := t.TempDir()
	run := func(dir string, args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run(real, "init", "-q", "-b", "main")
	run(real, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "init")
	run(real, "worktree", "add", "-q", "-b", "feature/x", filepath.Join(real, "var", "worktrees", "w1"))
	link := filepath.Join(t.TempDir(), "project")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	out, err := Command(context.Background(), filepath.Join(link, "var", "worktrees", "w1"), "rev-parse", "--abbrev-ref", "HEAD").CombinedOutput()
	if b := strings.TrimSpace(string(out)); err != nil || b != "feature/x" {
		t.Errorf("through the symlink: %q %v", b, err)
	}
}
