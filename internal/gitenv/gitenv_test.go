package gitenv

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
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

// linked is a repository with a commit and a linked worktree at
// var/worktrees/w1 on feature/x.
func linked(t testing.TB) (repo, wt string) {
	t.Helper()
	repo = t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "init"},
		{"worktree", "add", "-q", "-b", "feature/x", filepath.Join("var", "worktrees", "w1")},
	} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return repo, filepath.Join(repo, "var", "worktrees", "w1")
}

// Whatever the agent leaves at its worktree's .git (a git folder of its
// own, nothing, a symlink to another repository), git there, and in any
// folder below, follows the repository's record of the worktree, with no
// system or user config.
func TestPinFollowsTheRecordWhateverIsAtDotGit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, wt string)
	}{
		{"a git folder", func(t *testing.T, wt string) {
			os.Remove(filepath.Join(wt, ".git"))
			if out, err := exec.Command("git", "init", "-q", "-b", "evil", wt).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
		}},
		{"nothing", func(t *testing.T, wt string) { os.Remove(filepath.Join(wt, ".git")) }},
		{"a symlink", func(t *testing.T, wt string) {
			other := t.TempDir()
			exec.Command("git", "init", "-q", "-b", "evil", other).Run()
			os.Remove(filepath.Join(wt, ".git"))
			if err := os.Symlink(filepath.Join(other, ".git"), filepath.Join(wt, ".git")); err != nil {
				t.Fatal(err)
			}
		}},
		{"a git folder in a subfolder too", func(t *testing.T, wt string) {
			os.Remove(filepath.Join(wt, ".git"))
			for _, d := range []string{wt, filepath.Join(wt, "sub")} {
				if out, err := exec.Command("git", "init", "-q", "-b", "evil", d).CombinedOutput(); err != nil {
					t.Fatalf("%v: %s", err, out)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, wt := linked(t)
			real, _ := filepath.EvalSymlinks(wt)
			admin, _ := filepath.EvalSymlinks(filepath.Join(repo, ".git", "worktrees", "w1"))
			sub := filepath.Join(wt, "sub")
			os.MkdirAll(sub, 0o755)
			tc.plant(t, wt)
			for _, dir := range []string{wt, sub} {
				want := []string{"GIT_DIR=" + admin, "GIT_WORK_TREE=" + real, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
				if got := Pin(dir); !slices.Equal(got, want) {
					t.Errorf("Pin(%s) = %q, want %q", dir, got, want)
				}
				out, err := Command(context.Background(), dir, "rev-parse", "--abbrev-ref", "HEAD").CombinedOutput()
				if b := strings.TrimSpace(string(out)); err != nil || b != "feature/x" {
					t.Errorf("git in %s: %q %v, want feature/x", dir, b, err)
				}
			}
			if got, err := WorktreeAdmin(wt); err != nil || got != admin {
				t.Errorf("WorktreeAdmin = %q %v, want %s", got, err, admin)
			}
		})
	}
}

// A main checkout is left to git, and so is a worktree outside any
// repository's folder.
func TestPinLeavesAMainCheckout(t *testing.T) {
	repo, _ := linked(t)
	os.MkdirAll(filepath.Join(repo, "docs"), 0o755)
	for _, dir := range []string{repo, filepath.Join(repo, "docs")} {
		if got := Pin(dir); got != nil {
			t.Errorf("Pin(%s) = %q, want nil", dir, got)
		}
	}
	outside := filepath.Join(t.TempDir(), "w2")
	if out, err := exec.Command("git", "-C", repo, "worktree", "add", "-q", "-b", "feature/y", outside).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got := Pin(outside); got != nil {
		t.Errorf("Pin(%s) = %q, want nil", outside, got)
	}
}

// ReadFile never blocks on a FIFO, refuses what is not a regular file and
// what is over its limit, and never follows a symlink.
func TestReadFileRefusesWhatIsNotASmallRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	os.WriteFile(big, make([]byte, 100), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(big, link)
	done := make(chan error, 1)
	go func() { _, err := ReadFile(fifo, 10); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("a FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadFile blocked on a FIFO")
	}
	if _, err := ReadFile(big, 99); err == nil {
		t.Error("a file over the limit was read")
	}
	if b, err := ReadFile(big, 100); err != nil || len(b) != 100 {
		t.Errorf("at the limit: %d bytes, %v", len(b), err)
	}
	if _, err := ReadFile(link, 100); err == nil {
		t.Error("a symlink was followed")
	}
	if _, err := ReadFile("/dev/zero", 100); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a device: %v", err)
	}
}

// BenchmarkPinMainCheckout is Pin's cost where most git runs: a main
// checkout's top folder.
func BenchmarkPinMainCheckout(b *testing.B) {
	repo, _ := linked(b)
	for b.Loop() {
		Pin(repo)
	}
}

// BenchmarkPinWorktree is Pin's cost in a linked worktree whose .git file
// is as git wrote it.
func BenchmarkPinWorktree(b *testing.B) {
	_, wt := linked(b)
	for b.Loop() {
		Pin(wt)
	}
}

// A worktree the repository no longer names (its .git deleted, then
// pruned) with a git folder of its agent's making is refused, not
// believed: under var/, a repository no record names is an agent's.
func TestPinRefusesAPrunedWorktreesGitFolder(t *testing.T) {
	repo, wt := linked(t)
	os.Remove(filepath.Join(wt, ".git"))
	for _, args := range [][]string{{"-C", repo, "worktree", "prune"}, {"init", "-q", "-b", "evil", wt}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if out, err := Command(context.Background(), wt, "rev-parse", "--abbrev-ref", "HEAD").CombinedOutput(); err == nil {
		t.Errorf("the agent's repository was believed: %s", out)
	}
}

// In a worktree git reads neither the user's nor the system's config: a
// filter defined there is not one an agent's .gitattributes can name.
func TestPinnedGitReadsNoGlobalConfig(t *testing.T) {
	global := filepath.Join(t.TempDir(), "gitconfig")
	os.WriteFile(global, []byte("[user]\n\tname = global-user\n[filter \"g\"]\n\tclean = touch /nonexistent/ran\n"), 0o644)
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	repo, wt := linked(t)
	get := func(dir string) string {
		out, _ := Command(context.Background(), dir, "config", "--get", "user.name").Output()
		return strings.TrimSpace(string(out))
	}
	if got := get(repo); got != "global-user" {
		t.Errorf("in the main checkout: %q, want the user's config read", got)
	}
	if got := get(wt); got != "" {
		t.Errorf("in the worktree: %q, want no user config read", got)
	}
}

func TestWithheldNeverReachesAChild(t *testing.T) {
	t.Setenv("FW_TEST_FORGE_TOKEN", "s3cret")
	t.Setenv("FW_TEST_OTHER", "kept")
	Withhold("FW_TEST_FORGE_TOKEN")
	Withhold("")
	env := strings.Join(Env("X=1"), "\n")
	if strings.Contains(env, "s3cret") || !strings.Contains(env, "FW_TEST_OTHER=kept") || !strings.Contains(env, "X=1") {
		t.Fatalf("env:\n%s", env)
	}
	cmd := exec.Command("sh", "-c", "echo ${FW_TEST_FORGE_TOKEN:-none}")
	cmd.Env = Env()
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != "none" {
		t.Fatalf("the child saw %q (%v)", out, err)
	}
}
