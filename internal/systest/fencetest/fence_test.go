// Package fencetest stops a `work-once --run` driver past its lease's TTL
// (SIGSTOP) while its agent goes on committing, takes its plan over from
// another clone whose own driver commits and pushes, then lets the first
// go on (SIGCONT): the remote's feature branch never moves to the fenced
// holder's commits, the new holder's are on it, and the fenced driver
// says it lost the lease and did not push. Over the git backend, and over
// etcd with -tags etcd.
package fencetest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/systest/remotetest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

const (
	newCommits = 6
	slug       = "p000"
	branch     = "refs/heads/feature/" + slug
)

// committer is an agent that commits a file every 200 ms, n times, each
// commit's subject "<agent id> <i>", then exits 0. A commit that fails
// (the driver's own git briefly holding the index lock) is tried again.
func committer(n int) []string {
	script := fmt.Sprintf(`i=0
while [ $i -lt %d ]; do
	i=$((i+1))
	f="$FLEET_AGENT_ID-$i.txt"
	echo "$i" >"$f"
	try=0
	until git add "$f" && git -c user.name=agent -c user.email=agent@example.com commit -q -m "$FLEET_AGENT_ID $i"; do
		try=$((try+1))
		[ $try -lt 20 ] || exit 3
		sleep 0.05
	done
	sleep 0.2
done`, n)
	return []string{"sh", "-c", script}
}

// git runs git in dir and returns its trimmed stdout; "" on failure.
func git(dir string, args ...string) string {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// subject is commit oid's subject line in bare.
func subject(bare, oid string) string { return git(bare, "log", "-1", "--format=%s", oid) }

// driver is one `work-once --run` process.
type driver struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
	done     chan struct{}
}

func startDriver(t *testing.T, dir, agent, ttl string) *driver {
	t.Helper()
	d := &driver{done: make(chan struct{})}
	d.cmd = fwtest.Cmd(dir, nil, "work-once", "--root", dir, "--agent-id", agent, "--run", "--slug", slug, "--lease-ttl", ttl)
	d.cmd.Stdout, d.cmd.Stderr = &d.out, &d.err
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.cmd.Wait(); close(d.done) }()
	t.Cleanup(func() {
		_ = d.cmd.Process.Signal(syscall.SIGCONT)
		_ = d.cmd.Process.Kill()
		<-d.done
	})
	return d
}

// wait waits at most limit for the driver to exit, and returns its code.
func (d *driver) wait(t *testing.T, what string, limit time.Duration) int {
	t.Helper()
	select {
	case <-d.done:
		return d.cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		t.Fatalf("%s still running after %v\nstderr:\n%s", what, limit, d.err.String())
		return -1
	}
}

// waitFor polls ok every 20 ms for at most 30 s; on a timeout it fails
// t with the tail of the driver log dir keeps for agent.
func waitFor(t *testing.T, what, dir, agent string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(look.LogPath(dir, agent))
			t.Fatalf("timed out waiting for %s; %s's log:\n%s", what, agent, tail(string(log)))
		}
	}
}

// tipBy waits for the remote's feature branch to be at a commit by
// agent, whose driver runs in dir, and returns it.
func tipBy(t *testing.T, bare, dir, agent string) string {
	t.Helper()
	tip := ""
	waitFor(t, "a push of "+agent+"'s commits", dir, agent, func() bool {
		tip = git(bare, "rev-parse", "--verify", "--quiet", branch)
		return tip != "" && strings.HasPrefix(subject(bare, tip), agent+" ")
	})
	return tip
}

// fencedHolder is the scenario over clones a and b of bare, whose
// fleetwatch.yaml name the backend, and whose bare remote keeps a reflog
// of every update.
func fencedHolder(t *testing.T, bare, a, b string, contained bool) {
	if !contained {
		fwtest.Uncontained(t, a)
		fwtest.Uncontained(t, b)
	}
	fwtest.WithExecutor(t, a, committer(150)...)
	fwtest.WithExecutor(t, b, committer(newCommits)...)
	// 6 s: a renewal every 2 s, so a loaded machine's slow push does not
	// lose the lease before old has pushed once; SIGSTOP makes it lapse.
	old := startDriver(t, a, "old", "6")
	before := tipBy(t, bare, a, "old")
	if err := old.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Its agent, in a process group of its own, goes on committing.
	var rec fwtest.Result
	waitFor(t, "the takeover", a, "old", func() bool {
		rec = fwtest.Run(t, b, "work-once", "--root", b, "--agent-id", "new", "--recover", "--slug", slug, "--lease-ttl", "10")
		// etcd drops an expired lease itself: the plan is then free,
		// and the new driver claims it.
		free := rec.Code == 1 && strings.Contains(rec.Stderr, "no lease")
		if rec.Code != 0 && !free {
			time.Sleep(200 * time.Millisecond)
		}
		return rec.Code == 0 || free
	})
	// Whatever push was on its way when the driver stopped has landed.
	stopped := git(bare, "rev-parse", branch)
	if !strings.HasPrefix(subject(bare, stopped), "old ") || !isAncestor(bare, before, stopped) {
		t.Fatalf("before the takeover the branch is at %s (%q)", stopped, subject(bare, stopped))
	}
	// The fenced driver goes on once the new one has started its agent
	// from the remote's branch, before that agent's first push: where a
	// late push of the fenced holder would land between the two.
	next := startDriver(t, b, "new", "10")
	waitFor(t, "the new holder's agent to start", b, "new", func() bool {
		log, _ := os.ReadFile(look.LogPath(b, "new"))
		return bytes.Contains(log, []byte(" fleet run "))
	})
	if err := old.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if code := old.wait(t, "the fenced driver", 30*time.Second); code == 0 {
		t.Errorf("the fenced driver exited 0:\n%s", old.err.String())
	}
	if code := next.wait(t, "the new holder's driver", 60*time.Second); code != 0 {
		t.Fatalf("the new holder's driver: exit %d\n%s", code, next.err.String())
	}

	// Every value the remote's branch ever held is the old holder's from
	// before it was stopped, or the new holder's.
	for _, v := range strings.Fields(git(bare, "reflog", "show", "--format=%H", branch)) {
		if s := subject(bare, v); !strings.HasPrefix(s, "new ") && !isAncestor(bare, v, stopped) {
			t.Errorf("the remote's branch moved to %s (%q), a commit of the fenced holder", v, s)
		}
	}
	final := git(bare, "rev-parse", branch)
	for _, s := range strings.Split(git(bare, "log", "--format=%s", stopped+".."+final), "\n") {
		if !strings.HasPrefix(s, "new ") {
			t.Errorf("after the takeover the branch gained %q", s)
		}
	}
	if s := subject(bare, final); s != fmt.Sprintf("new %d", newCommits) {
		t.Errorf("the branch ends at %q, want the new holder's last commit", s)
	}
	if !strings.Contains(git(bare, "ls-tree", "-r", "--name-only", "main", ".plans/"), "review-needed/"+slug+".md") {
		t.Errorf("the plan did not reach review-needed on the remote's main")
	}
	oldLog := readFile(t, look.LogPath(a, "old"))
	for _, want := range []string{"lease lost", "did not push feature/" + slug} {
		if !strings.Contains(oldLog, want) {
			t.Errorf("the fenced driver's log does not say %q:\n%s", want, tail(oldLog))
		}
	}
	if strings.Contains(oldLog, "pushed feature/"+slug) && strings.LastIndex(oldLog, "pushed feature/"+slug) > strings.Index(oldLog, "lease lost") {
		t.Errorf("the fenced driver logged a push after losing its lease:\n%s", tail(oldLog))
	}
	if newLog := readFile(t, look.LogPath(b, "new")); strings.Contains(newLog, "push of feature/") || strings.Contains(newLog, "did not push") {
		t.Errorf("the new holder's pushes were refused:\n%s", tail(newLog))
	}
	// A contained agent's commits reach the branch only when the driver
	// brings them, which a driver that lost its lease may not have done.
	if !contained && !refusedEvent(t, a) {
		t.Errorf("no push-refused event for %s in the fenced holder's event log", slug)
	}
}

func isAncestor(dir, a, b string) bool {
	return exec.Command("git", "-C", dir, "merge-base", "--is-ancestor", a, b).Run() == nil
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tail is the last 40 lines of s.
func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-40):], "\n")
}

// refusedEvent reports whether dir's event log has a push-refused event
// for the plan.
func refusedEvent(t *testing.T, dir string) bool {
	t.Helper()
	tree, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := tree.Events()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Event == "push-refused" && e.Slug == slug && e.AgentID == "old" {
			return true
		}
	}
	return false
}

// fleet is a remote with one plan, p000, whose every branch update is
// kept in its reflog, and two clones of it.
func fleet(t *testing.T) (bare, a, b string) {
	f := remotetest.NewFleet(t, remotetest.Plans(1)...)
	if out, err := exec.Command("git", "-C", f.Bare, "config", "core.logAllRefUpdates", "always").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return f.Bare, f.Clone(t, f.Bare), f.Clone(t, f.Bare)
}

// TestFencedGitHolderNeverPushes is the scenario over the git backend,
// with agents committing straight onto the branch and contained ones.
func TestFencedGitHolderNeverPushes(t *testing.T) {
	t.Parallel()
	for _, contained := range []bool{false, true} {
		t.Run(fmt.Sprintf("contained=%v", contained), func(t *testing.T) {
			// Both wait on leases' clocks, not the CPU.
			t.Parallel()
			bare, a, b := fleet(t)
			remotetest.NeedBackend(t, a)
			fencedHolder(t, bare, a, b, contained)
		})
	}
}
