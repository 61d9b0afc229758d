package workers

import (
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/seat"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// freeRange finds n consecutive ports that nothing listens on now, below
// the kernel's ephemeral range so outgoing connections do not take them.
func freeRange(t *testing.T, n int) look.PortRange {
	t.Helper()
	for range 100 {
		lo := 20000 + rand.IntN(10000)
		ok := true
		for p := lo; p < lo+n && ok; p++ {
			ok = look.Bindable(p)
		}
		if ok {
			return look.PortRange{Lo: lo, Hi: lo + n - 1}
		}
	}
	t.Fatalf("no %d consecutive free ports found", n)
	return look.PortRange{}
}

func TestParsePortRange(t *testing.T) {
	for _, c := range []struct {
		in   string
		want look.PortRange
		err  string
	}{
		{in: "4100-4999", want: look.PortRange{Lo: 4100, Hi: 4999}},
		{in: " 8000 - 8000 ", want: look.PortRange{Lo: 8000, Hi: 8000}},
		{in: "1-65535", want: look.PortRange{Lo: 1, Hi: 65535}},
		{in: "4999-4100", err: "reversed"},
		{in: "0-10", err: "1 to 65535"},
		{in: "60000-70000", err: "1 to 65535"},
		{in: "4100", err: "want LO-HI"},
		{in: "a-b", err: "want LO-HI"},
		{in: "-5-10", err: "want LO-HI"},
		{in: "", err: "want LO-HI"},
		{in: "4100-4999-5000", err: "want LO-HI"},
	} {
		got, err := look.ParsePortRange(c.in)
		if c.err == "" && (err != nil || got != c.want) {
			t.Errorf("ParsePortRange(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n")) {
			t.Errorf("ParsePortRange(%q): error %v, want one line with %q", c.in, err, c.err)
		}
	}
	if look.DefaultPorts.String() != "4100-4999" {
		t.Errorf("DefaultPorts = %s", look.DefaultPorts)
	}
}

// Many agents get distinct ports in the range, and each keeps its own on
// every later run.
func TestAssignPortStableAndDistinct(t *testing.T) {
	dir := testkit.Repo(t)
	r := freeRange(t, 40)
	got := map[string]int{}
	seen := map[int]string{}
	for i := range 30 {
		id := "agent-" + strconv.Itoa(i)
		p, err := look.AssignPort(dir, id, r)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Contains(p) {
			t.Fatalf("%s got %d, outside %s", id, p, r)
		}
		if other, dup := seen[p]; dup {
			t.Fatalf("%s and %s share port %d", id, other, p)
		}
		seen[p], got[id] = id, p
	}
	for id, want := range got {
		if p, err := look.AssignPort(dir, id, r); err != nil || p != want {
			t.Errorf("%s: second run %d %v, want %d", id, p, err, want)
		}
		if p, ok := look.PortOf(dir, id); !ok || p != want {
			t.Errorf("PortOf(%s) = %d %v, want %d", id, p, ok, want)
		}
	}
	if _, ok := look.PortOf(dir, "nobody"); ok {
		t.Error("PortOf an agent without a port")
	}
}

// Goroutines of one process exclude each other through the lock too (the
// race between processes is TestWorktreeEnsurePortsRace in package main).
func TestAssignPortConcurrent(t *testing.T) {
	dir := testkit.Repo(t)
	r := freeRange(t, 20)
	ports := make([]int, 16)
	errs := make([]error, len(ports))
	var wg sync.WaitGroup
	for i := range ports {
		wg.Go(func() { ports[i], errs[i] = look.AssignPort(dir, "c-"+strconv.Itoa(i), r) })
	}
	wg.Wait()
	seen := map[int]bool{}
	for i, p := range ports {
		if errs[i] != nil || seen[p] {
			t.Fatalf("agent %d: port %d err %v (all: %v)", i, p, errs[i], ports)
		}
		seen[p] = true
	}
}

func TestAssignPortSkipsBound(t *testing.T) {
	dir := testkit.Repo(t)
	r := freeRange(t, 3)
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(r.Lo))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if p, err := look.AssignPort(dir, "a", r); err != nil || p != r.Lo+1 {
		t.Fatalf("got %d %v, want %d (%d is bound)", p, err, r.Lo+1, r.Lo)
	}
	// An agent's own recorded port is its own even while it listens there.
	l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(r.Lo+1))
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if p, err := look.AssignPort(dir, "a", r); err != nil || p != r.Lo+1 {
		t.Fatalf("again: %d %v", p, err)
	}
}

// A port outside the range asked for is given up for one inside it.
func TestAssignPortNewRange(t *testing.T) {
	dir := testkit.Repo(t)
	r1, r2 := freeRange(t, 2), freeRange(t, 2)
	if r1 == r2 {
		t.Skip("the same range twice")
	}
	p1, _ := look.AssignPort(dir, "a", r1)
	p2, err := look.AssignPort(dir, "a", r2)
	if err != nil || !r2.Contains(p2) {
		t.Fatalf("moved from %d to %d %v, want inside %s", p1, p2, err, r2)
	}
	if p, _ := look.PortOf(dir, "a"); p != p2 {
		t.Fatalf("recorded %d, want %d", p, p2)
	}
}

// writeState records agentID as a worker in state, heartbeating now.
func writeState(t *testing.T, dir, agentID, state string, beat time.Time) {
	t.Helper()
	st := look.State{PID: os.Getpid(), Host: look.Hostname(), AgentID: agentID, State: state,
		Started: look.Stamp{Time: beat}, LastHeartbeat: look.Stamp{Time: beat}, HeartbeatEvery: 10}
	if err := look.WriteState(dir, st); err != nil {
		t.Fatal(err)
	}
}

// backdate makes every port in dir given an hour ago, past portGrace.
func backdate(t *testing.T, dir string) {
	t.Helper()
	rec, err := look.LoadPorts(dir)
	if err != nil {
		t.Fatal(err)
	}
	for id := range rec.Given {
		rec.Given[id] = look.Stamp{Time: time.Now().Add(-time.Hour)}
	}
	if err := look.SavePorts(dir, rec); err != nil {
		t.Fatal(err)
	}
}

// With every port given, a port is taken back only from an agent whose
// state file says it is not live (exited or dead before stale), that has
// not asked for it lately, and only while nothing listens on it.
func TestAssignPortExhaustedRange(t *testing.T) {
	dir := testkit.Repo(t)
	r := freeRange(t, 2)
	a, _ := look.AssignPort(dir, "a", r)
	b, _ := look.AssignPort(dir, "b", r)
	writeState(t, dir, "a", look.StateRunning, time.Now())
	writeState(t, dir, "b", look.StateRunning, time.Now())
	backdate(t, dir)
	_, err := look.AssignPort(dir, "c", r)
	if err == nil || !strings.Contains(err.Error(), "no free port in "+r.String()) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("all live: %v", err)
	}
	writeState(t, dir, "b", look.StateExited, time.Now())
	// b asked for its port a moment ago: its driver may not have written
	// its state file for this run yet.
	look.AssignPort(dir, "b", r)
	if p, err := look.AssignPort(dir, "c", r); err == nil {
		t.Fatalf("c took port %d from live a or from b, given it a moment ago", p)
	}
	writeState(t, dir, "a", look.StateRunning, time.Now().Add(-time.Hour)) // stale
	backdate(t, dir)
	if p, err := look.AssignPort(dir, "c", r); err != nil || p != b {
		t.Fatalf("c got %d %v, want exited b's %d before stale a's %d", p, err, b, a)
	}
	if _, ok := look.PortOf(dir, "b"); ok {
		t.Fatal("b still holds the port c was given")
	}
	if p, err := look.AssignPort(dir, "d", r); err != nil || p != a {
		t.Fatalf("d got %d %v, want stale a's %d", p, err, a)
	}
	// c and d have no state file: nothing says they stopped.
	backdate(t, dir)
	if p, err := look.AssignPort(dir, "e", r); err == nil {
		t.Fatalf("e got %d from an agent without a state file", p)
	}
	// A port taken back is still skipped while something listens on it.
	writeState(t, dir, "c", look.StateExited, time.Now())
	writeState(t, dir, "d", look.StateExited, time.Now())
	for _, p := range []int{a, b} {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
	}
	if p, err := look.AssignPort(dir, "e", r); err == nil {
		t.Fatalf("e got bound port %d", p)
	}
	if _, err := look.AssignPort(dir, "e", look.PortRange{Lo: 5, Hi: 1}); err == nil || !strings.Contains(err.Error(), "reversed") {
		t.Fatalf("reversed range: %v", err)
	}
}

// A worker in a project root gets a port without a worktree, in git or not,
// and that adds no agents entry to the registry.
func TestAssignPortWithoutWorktree(t *testing.T) {
	r := freeRange(t, 2)
	plain := t.TempDir()
	if p, err := look.AssignPort(plain, "root-worker", r); err != nil || p != r.Lo {
		t.Fatalf("outside git: %d %v", p, err)
	}
	if _, err := os.Stat(filepath.Join(plain, tree.RegistryFile)); err == nil {
		t.Fatal("a port made a registry")
	}
	dir := testkit.Repo(t)
	if _, err := look.AssignPort(dir, "root-worker", r); err != nil {
		t.Fatal(err)
	}
	if list, err := look.List(dir); err != nil || len(list) != 0 {
		t.Fatalf("List %v %v, want no worktrees", list, err)
	}
	if status := testkit.Git(t, dir, "status", "--porcelain", "--untracked-files=all"); strings.Contains(status, "var/") {
		t.Fatalf("var/ shows in git status: %q", status)
	}
}

// List and Inspect carry each worktree's port, which registry.json never
// holds: anchor rewrites that file with five keys per agent.
func TestListShowsPortsKeptOutOfRegistry(t *testing.T) {
	dir := testkit.Repo(t)
	r := freeRange(t, 5)
	wt, err := seat.Ensure(dir, "mid-1", "x")
	if err != nil {
		t.Fatal(err)
	}
	p, err := look.AssignPort(dir, "mid-1", r)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := look.List(dir)
	if len(list) != 1 || list[0].Port != p {
		t.Fatalf("List %+v, want port %d", list, p)
	}
	if st := look.Inspect(dir, list); st[0].Port != p {
		t.Fatalf("Inspect %+v", st[0])
	}
	if again, _ := seat.Ensure(dir, "mid-1", "x"); again.Port != p || again.Path != wt.Path {
		t.Fatalf("Ensure again %+v", again)
	}
	testkit.AnchorRegistry(t, dir)
}

// Ports survive anchor's workers sharing the tree: anchor reads
// registry.json as fleetwatch writes it, lists no port-only agent, and its
// rewrite (which drops keys it does not know) leaves every port in place.
func TestPortsSurviveAnchorRegistry(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed; .ci/run installs it")
	}
	script, _ := filepath.Abs("testdata/anchor_registry.py")
	anchor := func(verb, dir string) string {
		t.Helper()
		out, err := exec.Command(python, script, verb, dir).CombinedOutput()
		if err != nil {
			t.Fatalf("anchor %s: %v\n%s", verb, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	dir := testkit.Repo(t)
	r := freeRange(t, 5)
	a, _ := seat.Ensure(dir, "a", "x")
	b, _ := seat.Ensure(dir, "b", "")
	ports := map[string]int{}
	for _, id := range []string{"a", "b", "root-only"} {
		if ports[id], err = look.AssignPort(dir, id, r); err != nil {
			t.Fatal(err)
		}
	}
	want := "a\tfeature/x\t" + a.Path + "\nb\tagent/b\t" + b.Path
	if got := anchor("list", dir); got != want {
		t.Fatalf("anchor lists:\n%s\nwant:\n%s", got, want)
	}
	anchor("rewrite", dir)
	list, err := look.List(dir)
	if err != nil || len(list) != 2 || list[0].Port != ports["a"] || list[1].Port != ports["b"] {
		t.Fatalf("after anchor's rewrite: %+v %v", list, err)
	}
	for id, want := range ports {
		if p, _ := look.AssignPort(dir, id, r); p != want {
			t.Errorf("%s: port %d after anchor's rewrite, want %d", id, p, want)
		}
	}
	if _, err := seat.Remove(dir, "a", false, false); err != nil {
		t.Fatal(err)
	}
	if got := anchor("list", dir); got != "b\tagent/b\t"+b.Path {
		t.Fatalf("after remove anchor lists %q", got)
	}
}
