package firsthour2test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/fleetwatch/fleetwatch/internal/systest/landkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// scaffold with no terminal, in a repository on main, names main as the
// integration branch in fleetwatch.yaml and says so, and a change landed
// through the queue reaches main (and the checkout of it).
func TestScaffoldTakesTheDefaultBranch(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitRepo(t)
	testkit.Git(t, dir, "branch", "-M", "main")
	r := fwtest.Run(t, dir, "scaffold")
	fwtest.Want(t, r, 0)
	if !strings.Contains(r.Stdout, "created fleetwatch.yaml (integration: main;") || !strings.Contains(r.Stdout, "Integration branch: main.") {
		t.Errorf("scaffold does not say the integration branch is main: %v", r)
	}
	settings := landkit.ReadFile(t, dir, "fleetwatch.yaml")
	if !strings.Contains(settings, "\nintegration: main\n") {
		t.Fatalf("fleetwatch.yaml does not name main:\n%s", settings)
	}
	// Settings and the project's files committed on main, as the quick
	// start says; plans and var/ stay out of this test's way.
	landkit.Write(t, dir, ".gitignore", "var/\n.plans/\n")
	testkit.Git(t, dir, "add", "-A")
	testkit.Git(t, dir, "commit", "-q", "-m", "fleetwatch")

	wt := filepath.Join(t.TempDir(), "wt")
	testkit.Git(t, dir, "worktree", "add", "-q", "-b", "feature/hello", wt, "main")
	landkit.Write(t, wt, "hello.txt", "hello\n")
	testkit.Git(t, wt, "add", "hello.txt")
	testkit.Git(t, wt, "commit", "-q", "-m", "hello")
	tip := fwtest.GitOut(t, wt, "rev-parse", "HEAD")
	testkit.Git(t, dir, "worktree", "remove", "--force", wt)
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "review-needed/hello.md"}, 0)

	landkit.Queued(t, dir, "hello")
	r = landkit.Land(t, dir, nil, "--ungated")
	fwtest.Want(t, r, 0)
	if !strings.Contains(r.Stdout, "main is now") || strings.Contains(r.Stderr, "warning") {
		t.Errorf("queue land: %v", r)
	}
	if _, err := landkit.GitCmd(dir, "merge-base", "--is-ancestor", tip, "main"); err != nil {
		t.Error("the change did not reach main")
	}
	if st, _ := landkit.GitCmd(dir, "status", "--porcelain"); st != "" {
		t.Errorf("git status after landing on main, checked out:\n%s", st)
	}
	if _, err := os.Stat(filepath.Join(dir, "hello.txt")); err != nil {
		t.Errorf("the checkout of main lacks the landed file: %v", err)
	}
}

// A repository whose fleetwatch.yaml exists keeps it, and its
// integration branch, as it says (or the default when it names none).
func TestScaffoldKeepsTheSettings(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitRepo(t)
	landkit.Write(t, dir, "fleetwatch.yaml", "integration: dev\n")
	r := fwtest.Run(t, dir, "scaffold")
	fwtest.Want(t, r, 0)
	if !strings.Contains(r.Stdout, "kept") || strings.Contains(r.Stdout, "Integration branch:") {
		t.Errorf("scaffold over existing settings: %v", r)
	}
	if got := landkit.ReadFile(t, dir, "fleetwatch.yaml"); got != "integration: dev\n" {
		t.Errorf("fleetwatch.yaml rewritten: %q", got)
	}
}

// On a terminal scaffold asks, offering the default branch: an answer
// git refuses is asked again, and the answer it takes is written, with
// how work reaches main.
func TestScaffoldAsksOnATerminal(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitRepo(t)
	testkit.Git(t, dir, "branch", "-M", "main")
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer master.Close()
	cmd := fwtest.Cmd(dir, nil, "scaffold")
	cmd.Stdin = tty
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	// The terminal's line discipline holds both lines until read.
	if _, err := master.Write([]byte("bad..name\ndev\n")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("scaffold on a terminal: %v\n%s", err, out.String())
		}
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("scaffold on a terminal did not finish:\n%s", out.String())
	}
	text := out.String()
	for _, want := range []string{"Integration branch, where approved work lands [main]: ", `git refuses branch name "bad..name"`,
		"Integration branch: dev.", "it reaches main when you merge dev into main"} {
		if !strings.Contains(text, want) {
			t.Errorf("scaffold's output lacks %q:\n%s", want, text)
		}
	}
	if !strings.Contains(landkit.ReadFile(t, dir, "fleetwatch.yaml"), "\nintegration: dev\n") {
		t.Error("fleetwatch.yaml does not name dev")
	}
}
