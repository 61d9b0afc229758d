package uitest

import (
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/systest/remotetest"
	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// TestTmuxWorkersOfAnotherMachine drives the real cockpit in tmux on one
// clone ("host-c") while a real `work-once --run` works on another
// ("host-a"), both claiming through the git remote: the Workers pane shows
// the worker with its host, and x asks it to stop through its record; the
// worker on host-a stops and the pane shows it exited.
func TestTmuxWorkersOfAnotherMachine(t *testing.T) {
	t.Parallel()
	needTmux(t)
	f := remotetest.NewFleet(t, remotetest.Plans(2)...)
	a, c := f.Clone(t, f.Bare), f.Clone(t, f.Bare)
	remotetest.NeedBackend(t, a)
	fwtest.WithExecutor(t, a, fwtest.FakeAgent(t), "-sleep", "2m", "-lines", "1000", "-every", "300ms")
	w := fwtest.Cmd(a, []string{"FLEET_HOST=host-a"}, "work-once", "--root", a, "--agent-id", "wa", "--run", "--once", "--lease-ttl", "9")
	out := &testkit.LockedBuffer{}
	w.Stdout, w.Stderr = out, out
	w.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-w.Process.Pid, syscall.SIGKILL)
		_ = w.Wait()
		if t.Failed() {
			t.Logf("wa's driver said:\n%s", out.String())
		}
	})
	fwtest.WaitFor(t, "wa's record on the remote", 30*time.Second, func() bool {
		return fwtest.GitOut(t, f.Bare, "for-each-ref", "refs/fleetwatch/workers/") != ""
	})
	tt := startTmux(t, 140, 32, c, []string{"FLEET_HOST=host-c"}, "--root", c)
	tt.waitShows(tmuxStartWait, `\[1 Plans\]`)
	tt.keys("4")
	tt.waitShows(tmuxWait, `\[4 Workers\]`, `#\s+agent\s+host\s`, `▸\s+wa\s+host-a\s.*● live`)
	tt.keys("x")
	tt.waitShows(tmuxWait, `Stop wa on host-a`, `through the claims backend`)
	tt.keys("Enter")
	tt.waitShows(tmuxWait, `asked wa on host-a to stop`)
	done := make(chan error, 1)
	go func() { done <- w.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("wa did not stop:\n%s", out.String())
	}
	tt.waitShows(45*time.Second, `wa\s+host-a\s.*exited 2`) // the next read: every 10 s
	tt.keys("q")
	if code := tt.waitExit(); code != 0 {
		t.Fatalf("exit %d; last screen:\n%s", code, tt.screen)
	}
}
