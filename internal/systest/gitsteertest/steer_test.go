package gitsteertest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// project is a git project with plan features/x.md (integration branch
// dev) whose agent is the steer program doing attack.
func project(t *testing.T, attack string) string {
	t.Helper()
	bin := fwtest.Program(t, "./testdata/steer")
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.md"})
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("integration: dev\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fwtest.WithExecutor(t, dir, bin, fwtest.Exe(t), attack)
	fwtest.GitOut(t, dir, "branch", "dev")
	return dir
}

func logOf(dir string) string {
	log, _ := os.ReadFile(look.LogPath(dir, "w1"))
	return string(log)
}

// The agent makes its worktree's .git a git folder of its own with a
// clean filter: the driver's git in that worktree (scope scan, no-commit
// check, settle) must follow the project's record of the worktree, so the
// filter never runs as the driver, the integration branch stays put, and
// the agent's honest commit still reaches its branch.
func TestAGitFolderInTheWorktreeSteersNothing(t *testing.T) {
	fwtest.NeedLandlock(t, 0)
	t.Parallel()
	dir := project(t, "gitdir")
	dev := fwtest.GitOut(t, dir, "rev-parse", "refs/heads/dev")

	r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "w1", "--slug", "x")
	log := logOf(dir)
	if r.Code != 0 || !strings.Contains(log, "git folder planted") || !strings.Contains(log, "handed in") {
		t.Fatalf("the run: %v\nlog:\n%s", r, log)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "var", "steered")); err == nil {
		t.Errorf("the agent's filter ran as the driver (%d times); log:\n%s", strings.Count(string(data), "steered"), log)
	}
	if got := fwtest.GitOut(t, dir, "rev-parse", "refs/heads/dev"); got != dev {
		t.Errorf("refs/heads/dev moved from %.12s to %.12s", dev, got)
	}
	if msg := fwtest.GitOut(t, dir, "log", "-1", "--format=%s", "refs/heads/feature/x"); msg != "honest work" {
		t.Errorf("feature/x's tip is %q, want the agent's commit; log:\n%s", msg, log)
	}
	if !fwtest.Exists(dir, "review-needed/x.md") {
		t.Errorf("plans after the run: %v", fwtest.Contents(t, dir))
	}
}

// The branch ref in the agent's store made a FIFO: the driver reads it
// when the agent hands its plan in, and must not block there; it still
// answers SIGTERM within its grace, and the plan does not stay
// in-progress.
func TestAFIFOBranchRefDoesNotHangTheDriver(t *testing.T) {
	fwtest.NeedLandlock(t, 0)
	t.Parallel()
	dir := project(t, "fifo")
	cmd := fwtest.Cmd(dir, nil, "work-once", "--run", "--ensure-worktree", "--agent-id", "w1", "--slug", "x")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)

	fwtest.WaitFor(t, "the FIFO planted", 20*time.Second, func() bool { return strings.Contains(logOf(dir), "fifo planted") })
	time.Sleep(500 * time.Millisecond) // the hand-in reaches the driver
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatalf("the driver did not end within 15s of SIGTERM; log:\n%s", logOf(dir))
	}
	if !strings.Contains(logOf(dir), "hand-in answered") {
		t.Errorf("the agent's hand-in was never answered; log:\n%s", logOf(dir))
	}
	if !strings.Contains(logOf(dir), "could not bring the agent's commits: "+filepath.Join(dir, "var", "fleet", "sandbox", "w1", "git", "refs", "heads", "feature", "x")+" is not a regular file") {
		t.Errorf("the driver does not say why it brought nothing; log:\n%s", logOf(dir))
	}
	if fwtest.Exists(dir, "in-progress/x.md") {
		t.Errorf("the plan stayed in-progress: %v\nlog:\n%s", fwtest.Contents(t, dir), logOf(dir))
	}
	// Handed in without its commits, it would be reviewed and landed empty.
	if !strings.Contains(logOf(dir), "stays with you: your commits could not be brought in") || fwtest.Exists(dir, "review-needed/x.md") {
		t.Errorf("the hand-in without the commits was not refused: %v\nlog:\n%s", fwtest.Contents(t, dir), logOf(dir))
	}
}

// The project's config names a remote and a credential helper: the
// agent's own store, refilled by the driver, names neither.
func TestTheAgentsStoreHasNoRemote(t *testing.T) {
	fwtest.NeedLandlock(t, 0)
	t.Parallel()
	dir := project(t, "remote")
	remote := filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", remote).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, kv := range [][2]string{
		{"remote.origin.url", remote},
		{"remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"},
		{"credential.helper", "store --file=" + filepath.Join(t.TempDir(), "secret")},
		{"url." + remote + ".insteadOf", "fleet:"},
		{"user.name", "Operator \"Op\" O'Brien"},
		{"user.email", "op@example.com"},
	} {
		fwtest.GitOut(t, dir, "config", kv[0], kv[1])
	}

	r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "w1", "--slug", "x")
	log := logOf(dir)
	if r.Code != 0 || !strings.Contains(log, "handed in") {
		t.Fatalf("the run: %v\nlog:\n%s", r, log)
	}
	for _, want := range []string{"remote.origin.url: none", "credential.helper: none", "user.name=Operator \"Op\" O'Brien"} {
		if !strings.Contains(log, want) {
			t.Errorf("the agent's log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, remote) {
		t.Errorf("the agent read the remote's URL:\n%s", log)
	}
}
