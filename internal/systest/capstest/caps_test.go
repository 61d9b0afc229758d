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

	"fleetwatch/internal/systest/remotetest"
	"fleetwatch/internal/testkit/fwtest"
)

// workers is how many `work-once --run` processes race at once.
const workers = 16

// endpoints writes dir's endpoints.yaml: one endpoint, claude, of
// provider anthropic, whose agent holds a file in running/ while it works
// and commits.
func endpoints(t *testing.T, dir, running string) {
	t.Helper()
	text := "endpoints:\n  - name: claude\n    tier: reasoner\n    model: fake-1\n    provider: anthropic\n" +
		"    command: [" + strconv.Quote(fwtest.FakeAgent(t)) + ", -sleep, 300ms, -commit, -running, " + strconv.Quote(running) + "]\n" +
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

// check fails t when the race went wrong: an error, more agents at once
// than cap, no race at all.
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
	if most < 2 || tl.capped+tl.backed == 0 {
		t.Errorf("no race: at most %d agents at once, %d refusals by the cap", most, tl.capped+tl.backed)
	}
}

// TestCapHoldsAcrossTwoClones: 16 workers, 8 on each of two clones of one
// bare remote (claims through git), race for 9 plans under `limits:
// {provider: {anthropic: 3}}`: never more than 3 agents run at once, and
// every plan ends in review-needed on the remote's main, its lease gone.
func TestCapHoldsAcrossTwoClones(t *testing.T) {
	const n, cap = 9, 3
	f := remotetest.NewFleet(t, remotetest.Plans(n)...)
	running := filepath.Join(t.TempDir(), "running")
	if err := os.Mkdir(running, 0o755); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for range 2 {
		dir := f.Clone(t, f.Bare)
		if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("claims: {backend: git, remote: origin}\nlimits: {provider: {anthropic: 3}}\nsandbox: off\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		endpoints(t, dir, running)
		dirs = append(dirs, dir)
	}
	remotetest.NeedBackend(t, dirs[0])
	tl := race(t, dirs, time.Now().Add(40*time.Second))
	// What a worker handed back as the others stopped is still claimable:
	// one more worker takes every plan that is left.
	for range n {
		if r := fwtest.Run(t, dirs[0], "work-once", "--root", dirs[0], "--agent-id", "last", "--endpoint", "claude", "--run", "--once"); !tl.count("last", r) {
			break
		}
	}
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
