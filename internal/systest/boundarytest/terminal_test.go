//go:build linux

package boundarytest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/systest/landkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// terminalAttacks are what an agent or a check tries on terminals and
// devices; each must be denied.
var terminalAttacks = []string{
	"tiocsti-dev-tty", "tiocsti-fd0", "tiocsti-fd1", "tiocsti-fd2",
	"tiocsti-victim", "write-victim", "steal-ctty", "mknod-kmsg", "capabilities",
}

// An operator runs a driver in their terminal; its agent (root, as on most
// VMs) tries to type into that terminal and into another person's, to
// write the kernel log through a device it makes, and to hold a
// capability. Nothing reaches either terminal, and its honest work lands
// on its branch.
func TestAgentReachesNoTerminal(t *testing.T) {
	fwtest.NeedLandlock(t, 0)
	t.Parallel()
	operator, victim := newTerminal(t), newTerminal(t)
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.md"})
	fwtest.WithExecutor(t, dir, intruder(t), fwtest.Exe(t), "tty", victim.slave.Name())

	code := runIn(t, operator, fwtest.Cmd(dir, nil, "work-once", "--run", "--ensure-worktree", "--agent-id", "w1", "--slug", "x"), time.Minute)
	log, _ := os.ReadFile(look.LogPath(dir, "w1"))
	if code != 0 {
		t.Fatalf("the driver exited %d; its terminal:\n%s\nlog:\n%s", code, operator.output(), log)
	}
	wantDenied(t, string(log), terminalAttacks...)
	for name, tt := range map[string]*terminal{"the operator's": operator, "the victim's": victim} {
		if n := tt.pending(t); n != 0 {
			t.Errorf("%d bytes were typed into %s terminal", n, name)
		}
	}
	time.Sleep(50 * time.Millisecond) // what was written reaches the reader
	if strings.Contains(victim.output(), "intruder") {
		t.Errorf("the agent wrote to the victim's terminal: %q", victim.output())
	}
	if msg := fwtest.GitOut(t, dir, "log", "-1", "--format=%s", "refs/heads/feature/x"); msg != "honest work" {
		t.Errorf("feature/x's tip is %q, want the agent's commit", msg)
	}
}

// A candidate's check runs while a person's `queue land` holds their
// terminal: it cannot type the next command into it either.
func TestCheckReachesNoTerminal(t *testing.T) {
	fwtest.NeedLandlock(t, 0)
	t.Parallel()
	operator, victim := newTerminal(t), newTerminal(t)
	run := `["` + intruder(t) + `", "` + fwtest.Exe(t) + `", check, "` + victim.slave.Name() + `"]`
	dir := landkit.LandProject(t, "checks:\n  - {name: sti, run: "+run+"}\n")
	tip := landkit.Feature(t, dir, "f", map[string]string{"f.txt": "f\n"})
	landkit.Queued(t, dir, "f")

	code := runIn(t, operator, fwtest.Cmd(dir, nil, "queue", "land", "--yes"), time.Minute)
	if code != 0 {
		t.Fatalf("queue land exited %d; its terminal:\n%s", code, operator.output())
	}
	landkit.WantLanded(t, dir, "f", tip)
	attacks := grepTree(filepath.Join(dir, "var"), "attack ")
	if attacks == "" {
		t.Fatalf("the check's log was not found under var/")
	}
	wantDenied(t, attacks, terminalAttacks...)
	for name, tt := range map[string]*terminal{"the operator's": operator, "the victim's": victim} {
		if n := tt.pending(t); n != 0 {
			t.Errorf("%d bytes were typed into %s terminal", n, name)
		}
	}
}
