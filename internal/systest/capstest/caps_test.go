package capstest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/systest/remotetest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// workers is how many `work-once --run` processes race at once.
const workers = 16

// endpoints writes dir's endpoints.yaml: one endpoint, claude, of
// provider anthropic, whose agent holds a file in running/ while it works
// and commits (in a git checkout).
func endpoints(t *testing.T, dir, running string, commit bool) {
	t.Helper()
	flags := "-sleep, 300ms, "
	if commit {
		flags += "-commit, "
	}
	text := "endpoints:\n  - name: claude\n    tier: reasoner\n    model: fake-1\n    provider: anthropic\n" +
		"    command: [" + strconv.Quote(fwtest.FakeAgent(t)) + ", " + flags + "-running, " + strconv.Quote(running) + "]\n" +
		"    sandbox_write: [" + strconv.Quote(running) + "]\n"
	if err := os.WriteFile(filepath.Join(dir, "endpoints.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tally is what the racing workers did.
type tally struct {
	mu                     sync.Mutex
	worked, capped, backed int
	failed                 []string
}

// race runs workers goroutines, the i'th in dirs[i%len(dirs)] as agent
// wI, each running `work-once --run --endpoint claude` again and again:
// after a plan worked or a cap refused it (a short random pause first),
// until it is told there is nothing to claim or the deadline passes.
func race(t *testing.T, dirs []string, deadline time.Time) *tally {
	var tl tally
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir, agent := dirs[i%len(dirs)], fmt.Sprintf("w%02d", i)
			for time.Now().Before(deadline) {
				r := fwtest.Run(t, dir, "work-once", "--root", dir, "--agent-id", agent, "--endpoint", "claude", "--run", "--once")
				if !tl.count(agent, r) {
					return
				}
				time.Sleep(time.Duration(50+rand.IntN(150)) * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	return &tl
}

// count notes one run's end; false: the worker found nothing to claim
// (or failed), and stops.
func (tl *tally) count(agent string, r fwtest.Result) bool {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	switch {
	case r.Code == fwtest.ExitOK:
		tl.worked++
		return true
	case r.Code == fwtest.ExitNothing && strings.Contains(r.Stderr, "counting this claim"):
		tl.backed++ // claimed, saw a cap exceeded, handed the plan back
		return true
	case r.Code == fwtest.ExitNothing && strings.Contains(r.Stderr, "limits: "):
		tl.capped++
		return true
	case r.Code == fwtest.ExitNothing:
		return false
	}
	tl.failed = append(tl.failed, agent+": "+r.String())
	return false
}

// mostAtOnce is the largest number of agents the fake agents' seen.log
// in running says ran at once, and how many runs it logged.
func mostAtOnce(t *testing.T, running string) (most, runs int) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(running, "seen.log"))
	if err != nil {
		t.Fatalf("no agent ran: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		n, err := strconv.Atoi(strings.Fields(line)[0])
		if err != nil {
			t.Fatalf("seen.log: %q", line)
		}
		most, runs = max(most, n), runs+1
	}
	return most, runs
}

// runningDir is the folder the fake agents hold a file in while they run.
func runningDir(t *testing.T) string {
	running := filepath.Join(t.TempDir(), "running")
	if err := os.Mkdir(running, 0o755); err != nil {
		t.Fatal(err)
	}
	return running
}

// drain is one more worker taking, one at a time, every plan a racer
// handed back as the others stopped: still claimable, never lost.
func (tl *tally) drain(t *testing.T, dir string, n int) {
	for range n {
		if r := fwtest.Run(t, dir, "work-once", "--root", dir, "--agent-id", "last", "--endpoint", "claude", "--run", "--once"); !tl.count("last", r) {
			return
		}
	}
}

// check fails t when the race went wrong: an error, more agents at once
// than cap, a cap that never refused anyone.
func (tl *tally) check(t *testing.T, running string, cap int) {
	t.Helper()
	for _, f := range tl.failed {
		t.Errorf("a worker failed: %s", f)
	}
	most, runs := mostAtOnce(t, running)
	t.Logf("%d agent runs, at most %d at once; %d plans worked, %d refused by a full cap before claiming, %d handed back after claiming",
		runs, most, tl.worked, tl.capped, tl.backed)
	if most > cap {
		t.Errorf("%d agents ran at once under a cap of %d", most, cap)
	}
	if tl.capped+tl.backed == 0 {
		t.Errorf("no race: the cap never refused a worker (at most %d agents at once)", most)
	}
}

// TestCapHoldsAcrossTwoClones: 16 workers, 8 on each of two clones of one
// bare remote (claims through git), race for 6 plans under `limits:
// {provider: {anthropic: 3}}`: never more than 3 agents run at once, and
// every plan ends in review-needed on the remote's main, its lease gone.
func TestCapHoldsAcrossTwoClones(t *testing.T) {
	const n, cap = 6, 3
	f := remotetest.NewFleet(t, remotetest.Plans(n)...)
	running := runningDir(t)
	var dirs []string
	for range 2 {
		dir := f.Clone(t, f.Bare)
		if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("claims: {backend: git, remote: origin}\nlimits: {provider: {anthropic: 3}}\nsandbox: off\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		endpoints(t, dir, running, true)
		dirs = append(dirs, dir)
	}
	remotetest.NeedBackend(t, dirs[0])
	tl := race(t, dirs, time.Now().Add(40*time.Second))
	tl.drain(t, dirs[0], n)
	tl.check(t, running, cap)
	out := fwtest.GitOut(t, f.Bare, "ls-tree", "-r", "--name-only", "main", ".plans/")
	for i := range n {
		if !strings.Contains(out, fmt.Sprintf(".plans/review-needed/p%03d.md", i)) {
			t.Errorf("p%03d is not in review-needed on the remote's main:\n%s", i, out)
		}
	}
	if refs := f.Leases(t); len(refs) != 0 {
		t.Errorf("lease refs left: %v", refs)
	}
}

// TestCapHoldsOnLeaseFiles: 16 workers race on one tree's lease files for
// 9 plans under `limits: {fleet: 3}` while anchor holds a tenth plan (a
// lease with no host, tier or endpoint: it counts toward the fleet's cap
// all the same): never more than 2 fake agents run at once, every plan
// ends in review-needed/, and anchor's stays as it was.
func TestCapHoldsOnLeaseFiles(t *testing.T) {
	const n = 9
	dir := fwtest.NewTree(t, append(remotetest.Plans(n), fwtest.Plan{Rel: "in-progress/anchors.md"})...)
	fwtest.PutLease(t, dir, "in-progress/anchors.md", fwtest.AnchorLease("in-progress/anchors.md", "anchor-1", 10, 3600))
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("limits:\n  fleet: 3\nsandbox: off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	running := runningDir(t)
	endpoints(t, dir, running, false)
	r := fwtest.Run(t, dir, "work-once", "--root", dir, "--agent-id", "lister", "--endpoint", "claude", "--list")
	if r.Code != 0 || strings.Contains(r.Stderr, "limits:") {
		t.Fatalf("--list with 1 of 3 live runs: %v", r)
	}
	tl := race(t, []string{dir}, time.Now().Add(40*time.Second))
	tl.drain(t, dir, n)
	tl.check(t, running, 2)
	for i, p := range remotetest.Plans(n) {
		if rel := "review-needed/" + filepath.Base(p.Rel); !fwtest.Exists(dir, rel) {
			t.Errorf("p%03d is not in review-needed/: %v", i, fwtest.SortedKeys(fwtest.Contents(t, dir)))
		}
	}
	if got := fwtest.ActiveOwner(t, dir, "in-progress/anchors.md"); got != "anchor-1" {
		t.Errorf("anchor's lease is held by %q now", got)
	}
}
