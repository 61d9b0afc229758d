package losttest

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

func agent(t *testing.T) string { return fwtest.Program(t, "./testdata/lostagent") }

// subjects is the branch's commit subjects, newest first.
func subjects(t *testing.T, dir, ref string) []string {
	t.Helper()
	return strings.Split(fwtest.GitOut(t, dir, "log", "--format=%s", ref), "\n")
}

func workerLog(dir, agent string) string {
	data, _ := os.ReadFile(look.LogPath(dir, agent))
	return string(data)
}

// The hand-off: m1 commits and exits 1; the operator releases its plan;
// m2 takes it up and goes on from m1's commit, on the same branch.
func TestHandOffAfterAFailedRunKeepsItsCommit(t *testing.T) {
	fwtest.NeedLandlock(t, 0)
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.md"})
	fwtest.WithExecutor(t, dir, agent(t), "-commit", "m1.txt=m1 work", "-exit", "1")
	r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "m1", "--slug", "x")
	// A failed task is handed back at once, its commits on its branch.
	if r.Code != fwtest.ExitError || !fwtest.Exists(dir, "features/x.md") {
		t.Fatalf("m1's run: %v\nlog:\n%s", r, workerLog(dir, "m1"))
	}
	if got := subjects(t, dir, "refs/heads/feature/x"); got[0] != "m1 work" {
		t.Errorf("after m1 exited 1, feature/x is %q, want m1's commit on it\nlog:\n%s", got, workerLog(dir, "m1"))
	}

	fwtest.WithExecutor(t, dir, agent(t), "-commit", "m2.txt=m2 work")
	r = fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "m2", "--slug", "x")
	if r.Code != 0 || !fwtest.Exists(dir, "review-needed/x.md") {
		t.Fatalf("m2's run: %v\nlog:\n%s", r, workerLog(dir, "m2"))
	}
	want := []string{"m2 work", "m1 work", "init"}
	if got := subjects(t, dir, "refs/heads/feature/x"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("feature/x after m2: %q, want %q", got, want)
	}
	m2 := filepath.Join(dir, "var", "worktrees", "m2")
	for _, f := range []string{"m1.txt", "m2.txt"} {
		if _, err := os.Stat(filepath.Join(m2, f)); err != nil {
			t.Errorf("m2's worktree lacks %s: %v", f, err)
		}
	}
}

// A build stopped for its scope keeps its commits on its branch for the
// operator to judge, and its plan waits in blocked/.
func TestScopeStopKeepsTheCommits(t *testing.T) {
	fwtest.NeedLandlock(t, 0)
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.md", Body: "\n## Files in scope\n- src/\n"})
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("on_scope_violation: stop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fwtest.WithExecutor(t, dir, agent(t), "-commit", "src/a.go=in scope", "-commit", "notes.txt=out of scope", "-hang")
	r := fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--agent-id", "w1", "--slug", "x", "--stop-grace", "1s")
	if r.Code != fwtest.ExitError || !strings.Contains(r.Stderr, "scope violation") || !fwtest.Exists(dir, "blocked/x.md") {
		t.Fatalf("the run: %v\nlog:\n%s", r, workerLog(dir, "w1"))
	}
	want := []string{"out of scope", "in scope", "init"}
	if got := subjects(t, dir, "refs/heads/feature/x"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("feature/x after the scope stop: %q, want %q\nlog:\n%s", got, want, workerLog(dir, "w1"))
	}
}

// kill -9 of a driver: its agent, deaf to SIGTERM, and the setsid daemon it
// started are gone within the stop grace plus 3 s, though no fleetwatch
// command runs after the kill (the driver's supervisor stops them); a
// recover then takes the plan over with the agent's commit on its branch.
// With the supervisor killed too, the recover itself stops the run and
// brings the commit in before the plan changes hands.
func TestKilledDriverLeavesNothingRunningAndNothingLost(t *testing.T) {
	fwtest.NeedLandlock(t, 0)
	t.Parallel()
	for _, c := range []struct {
		name           string
		killSupervisor bool
	}{{"the supervisor stops the run", false}, {"recover stops the run", true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.md"})
			pids := t.TempDir()
			agentPID, daemonPID := filepath.Join(pids, "agent"), filepath.Join(pids, "daemon")
			fwtest.WithExecutor(t, dir, agent(t), "-commit", "m1.txt=m1 work", "-daemon", daemonPID, "-pidfile", agentPID, "-hang")
			const grace = time.Second
			driver := fwtest.Cmd(dir, nil, "work-once", "--run", "--ensure-worktree", "--agent-id", "m1", "--slug", "x",
				"--stop-grace", grace.String(), "--lease-ttl", "6")
			if err := driver.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { driver.Process.Kill() })
			a, d := fwtest.ReadPID(t, agentPID), fwtest.ReadPID(t, daemonPID)
			t.Cleanup(func() {
				for _, pid := range []int{a, d} {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			// The pulse brings commits in as the agent works (every TTL/3):
			// the kill comes before it has, or this test proves nothing.
			if got := subjects(t, dir, "refs/heads/feature/x"); got[0] != "init" {
				t.Fatalf("feature/x is %q before the kill: the driver brought the commit already", got)
			}
			if !c.killSupervisor {
				supervisorReady(t, dir)
			}
			if c.killSupervisor {
				// (The first case fails should there be none.)
				if sup := supervisorOf(dir); sup > 0 {
					if err := syscall.Kill(sup, syscall.SIGKILL); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := driver.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			driver.Wait()
			killed := time.Now()
			gone := func() bool { return !testkit.Alive(a) && !testkit.Alive(d) }
			if c.killSupervisor {
				time.Sleep(grace + 3*time.Second)
				if gone() {
					t.Fatalf("the agent or its daemon ended with nobody to stop them")
				}
			} else {
				deadline := killed.Add(grace + 3*time.Second)
				for !gone() && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
				if !gone() {
					t.Fatalf("the agent (alive %v) or its daemon (alive %v) still runs %v after the driver's kill; log:\n%s",
						testkit.Alive(a), testkit.Alive(d), grace+3*time.Second, workerLog(dir, "m1"))
				}
				t.Logf("the agent and its daemon ended %v after the driver's kill", time.Since(killed).Round(time.Millisecond))
			}

			// The lease runs out; m2 recovers the plan, with m1's commit on it.
			fwtest.WaitFor(t, "m1's lease to expire", 15*time.Second, func() bool {
				return fwtest.Run(t, dir, "recover", "x", "--agent-id", "m2").Code == 0
			})
			if !gone() {
				t.Errorf("the recover left m1's agent or its daemon running")
			}
			if got := subjects(t, dir, "refs/heads/feature/x"); got[0] != "m1 work" {
				t.Errorf("after the recover, feature/x is %q, want m1's commit on it", got)
			}
		})
	}
}

// supervisorReady waits until the supervisor of the driver working in dir
// waits on its pipe (a thread of it in read(0, ...)): a test binary built
// with -race takes a while to start on a loaded machine, the real
// fleetwatch milliseconds, and the driver starts it long before its first
// agent.
func supervisorReady(t *testing.T, dir string) {
	t.Helper()
	fwtest.WaitFor(t, "the driver's supervisor", 20*time.Second, func() bool {
		pid := supervisorOf(dir)
		if pid == 0 {
			return false
		}
		calls, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "syscall"))
		for _, c := range calls {
			if data, err := os.ReadFile(c); err == nil && strings.HasPrefix(string(data), "0 0x0 ") {
				return true
			}
		}
		return false
	})
}

// supervisorOf is the pid of the supervisor of the driver working in dir,
// 0 when none runs.
func supervisorOf(dir string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		args := strings.Split(string(cmdline), "\x00")
		if slices.Contains(args, "supervise-run") && slices.Contains(args, dir) {
			return pid
		}
	}
	return 0
}

// The heartbeat's bring runs off the loop that renews the lease: an agent
// that makes its branch's ref a FIFO (whoever opens it to read waits for a
// writer) holds up no renewal, and once its driver is killed, its
// supervisor stops the run and refuses the FIFO instead of hanging on it.
func TestAStuckBringHoldsUpNoRenewal(t *testing.T) {
	fwtest.NeedLandlock(t, 0)
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.md"})
	pidfile := filepath.Join(t.TempDir(), "agent")
	fwtest.WithExecutor(t, dir, agent(t), "-commit", "m1.txt=m1 work", "-fifo-ref", "-pidfile", pidfile, "-hang")
	driver := fwtest.Cmd(dir, nil, "work-once", "--run", "--ensure-worktree", "--agent-id", "m1", "--slug", "x",
		"--stop-grace", "1s", "--lease-ttl", "3")
	if err := driver.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { driver.Process.Kill() })
	a := fwtest.ReadPID(t, pidfile)
	t.Cleanup(func() { syscall.Kill(a, syscall.SIGKILL) })
	renewals := func() int {
		log := workerLog(dir, "m1")
		_, after, _ := strings.Cut(log, "made refs/heads/feature/x a FIFO")
		return strings.Count(after, "heartbeat: lease on in-progress/x.md renewed")
	}
	// Renewed every second; the first pulse's bring is stuck from then on.
	fwtest.WaitFor(t, "three renewals after the FIFO", 8*time.Second, func() bool { return renewals() >= 3 })

	supervisorReady(t, dir)
	driver.Process.Signal(syscall.SIGKILL)
	driver.Wait()
	fwtest.WaitFor(t, "the agent to end", 4*time.Second, func() bool { return !testkit.Alive(a) })
	fwtest.WaitFor(t, "the supervisor to end", 5*time.Second, func() bool { return supervisorOf(dir) == 0 })
	if log := workerLog(dir, "m1"); !strings.Contains(log, "is not a regular file") {
		t.Errorf("the supervisor did not refuse the FIFO; log:\n%s", log)
	}
}
