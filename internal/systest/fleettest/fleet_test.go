package fleettest

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/systest/remotetest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// TestFleetAcrossMachines: workers on two clones publish through the git
// remote; a third clone's watch status lists both with their hosts; a
// stop asked there stops the worker on host-b, which hands its plan back;
// host-a's worker, killed, goes stale then dead on the reader's clock.
func TestFleetAcrossMachines(t *testing.T) {
	t.Parallel()
	f := remotetest.NewFleet(t, remotetest.Plans(3)...)
	a, b, c := f.Clone(t, f.Bare), f.Clone(t, f.Bare), f.Clone(t, f.Bare)
	remotetest.NeedBackend(t, a)
	acrossMachines(t, a, b, c, true)
}

// held counts the plans under a lease, as dir's --list says.
func held(t *testing.T, dir string) int {
	n := 0
	for _, p := range remotetest.List(t, dir, "observer").Plans {
		if p.Lease != nil {
			n++
		}
	}
	return n
}

// acrossMachines is the scenario on clones a, b (workers) and c (the
// reader); stale says the reader must see the killed worker stale before
// dead (git; etcd's key may vanish first, and then it is gone).
func acrossMachines(t *testing.T, a, b, c string, stale bool) {
	agent := fwtest.FakeAgent(t)
	for _, dir := range []string{a, b} {
		fwtest.WithExecutor(t, dir, agent, "-sleep", "2m", "-lines", "1000", "-every", "200ms")
	}
	wa, _ := remotetest.Worker(t, a, "host-a", "wa")
	wb, outB := remotetest.Worker(t, b, "host-b", "wb")
	var rows map[string]string
	fwtest.WaitFor(t, "both workers live in host-c's watch status", 30*time.Second, func() bool {
		rows = remotetest.Status(t, c, "host-c")
		return strings.HasPrefix(rows["wa on host-a"], "live, plan ") && strings.HasPrefix(rows["wb on host-b"], "live, plan ")
	})
	if !strings.Contains(rows["wa on host-a"], "last: ") {
		t.Errorf("no last log line published: %q", rows["wa on host-a"])
	}
	if n := held(t, c); n != 2 {
		t.Fatalf("want two plans held, have %d", n)
	}
	// host-c asks wb (on host-b) to stop: no signal crosses machines.
	r := fwtest.RunEnv(t, c, []string{"FLEET_HOST=host-c"}, "worker", "stop", "wb", "--root", c)
	if r.Code != 0 || !strings.Contains(r.Stdout, "asked to stop on host-b") {
		t.Fatalf("worker stop wb from host-c: %v", r.String())
	}
	done := make(chan error, 1)
	go func() { done <- wb.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("wb did not stop at a heartbeat:\n%s", outB.String())
	}
	if !strings.Contains(outB.String(), "stop asked by") {
		t.Errorf("wb's driver does not say who asked it to stop:\n%s", outB.String())
	}
	if n := held(t, c); n != 1 {
		t.Errorf("wb's plan was not handed back: %d plans held", n)
	}
	// wa's driver is killed with its agent: its record stops changing.
	_ = syscall.Kill(-wa.Process.Pid, syscall.SIGKILL)
	saw := map[string]bool{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("host-c saw wa %v", saw)
		}
	})
	fwtest.WaitFor(t, "wa dead (or gone) on host-c's clock", 60*time.Second, func() bool {
		row, ok := remotetest.Status(t, c, "host-c")["wa on host-a"]
		word, _, _ := strings.Cut(row, ",")
		saw[word] = true
		return word == "dead" || !ok && !stale
	})
	if stale && !saw["stale"] {
		t.Errorf("wa went dead without being seen stale first: %v", saw)
	}
	// Host-a sees its own worker from its state file, not twice.
	if rows := remotetest.Status(t, a, "host-a"); rows["wa on host-a"] != "" {
		t.Errorf("host-a lists its own worker among the fleet's: %v", rows)
	}
}
