package claimtest

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// raceProcs is how many worker processes race for the same tree.
const raceProcs = 32

// startRacers starts n fleetwatch processes with args (%d in an arg becomes
// the worker's number), all held at one barrier, then releases them together
// and returns each one's stdout and exit code.
func startRacers(t *testing.T, dir string, n int, args ...string) ([]string, []int) {
	t.Helper()
	barrier := filepath.Join(t.TempDir(), "go")
	outs := make([]bytes.Buffer, n)
	errs := make([]bytes.Buffer, n)
	cmds := make([]*exec.Cmd, n)
	for i := range n {
		a := make([]string, len(args))
		for j, s := range args {
			if strings.Contains(s, "%d") {
				s = fmt.Sprintf(s, i)
			}
			a[j] = s
		}
		cmds[i] = fwtest.Cmd(dir, []string{fwtest.BarrierEnv + "=" + barrier}, a...)
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &errs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	fwtest.OpenBarrier(t, barrier, n)
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := cmds[i].Wait()
			if ee, ok := err.(*exec.ExitError); ok {
				codes[i] = ee.ExitCode()
			} else if err != nil {
				codes[i] = -1
			}
		}()
	}
	wg.Wait()
	stdouts := make([]string, n)
	for i := range n {
		stdouts[i] = outs[i].String()
		if codes[i] > 1 || codes[i] < 0 {
			t.Errorf("worker %d exit %d: %s", i, codes[i], errs[i].String())
		}
	}
	return stdouts, codes
}

// TestRaceEveryPlanClaimedOnce races 32 worker processes draining a tree of
// 200 plans, several rounds: every plan must be claimed by exactly one
// worker, none lost, and each lease must name the worker that printed it.
func TestRaceEveryPlanClaimedOnce(t *testing.T) {
	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	for round := range rounds {
		t.Run(fmt.Sprintf("round%d", round), func(t *testing.T) {
			var plans []fwtest.Plan
			for i := range 200 {
				lane := "features"
				if i%3 == 0 {
					lane = "bugs"
				}
				plans = append(plans, fwtest.Plan{Rel: fmt.Sprintf("%s/p%03d.md", lane, i), Fields: fmt.Sprintf("Priority: P%d", 1+i%3)})
			}
			dir := fwtest.NewTree(t, plans...)
			before := fwtest.Contents(t, dir)
			stdouts, _ := startRacers(t, dir, raceProcs, "work-once", "--max-plans", "1000", "--tier", "mid", "--agent-id", "racer-%d")

			claimedBy := map[string]string{}
			for i, out := range stdouts {
				for _, line := range strings.Fields(out) {
					rel, err := filepath.Rel(filepath.Join(dir, ".plans"), line)
					if err != nil {
						t.Fatalf("bad output line %q", line)
					}
					if prev, dup := claimedBy[rel]; dup {
						t.Errorf("%s claimed twice: by %s and racer-%d", rel, prev, i)
					}
					claimedBy[rel] = fmt.Sprintf("racer-%d", i)
				}
			}
			if len(claimedBy) != 200 {
				t.Errorf("%d plans claimed, want 200", len(claimedBy))
			}
			after := fwtest.Contents(t, dir)
			if len(after) != 200 {
				t.Fatalf("%d plans on disk after the race, want 200", len(after))
			}
			for rel, agent := range claimedBy {
				if !strings.HasPrefix(rel, "in-progress/") {
					t.Errorf("printed %s, want an in-progress path", rel)
				}
				lease := fwtest.LeaseOf(t, dir, rel)
				if lease["agent_id"] != agent {
					t.Errorf("%s: lease held by %v, printed by %s", rel, lease["agent_id"], agent)
				}
				name := filepath.Base(rel)
				if before["features/"+name] != after[rel] && before["bugs/"+name] != after[rel] {
					t.Errorf("%s: content changed in the move", rel)
				}
			}
			leases, _ := filepath.Glob(filepath.Join(dir, ".plans", ".leases", "*.json"))
			if len(leases) != 200 {
				var extra []string
				for _, f := range leases {
					if !strings.HasPrefix(filepath.Base(f), "in-progress") {
						extra = append(extra, filepath.Base(f))
					}
				}
				t.Errorf("%d lease files, want 200 (no ready-path leases left behind): %v", len(leases), extra)
			}
		})
	}
}

// TestRaceNamedSlug races 32 processes for one named plan: exactly one wins.
func TestRaceNamedSlug(t *testing.T) {
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/only.md"})
	stdouts, codes := startRacers(t, dir, raceProcs, "work-once", "--slug", "only", "--tier", "mid", "--agent-id", "racer-%d")
	winners := 0
	for i, out := range stdouts {
		if codes[i] == 0 {
			winners++
			if !strings.HasSuffix(strings.TrimSpace(out), "in-progress/only.md") {
				t.Errorf("winner printed %q", out)
			}
		}
	}
	if winners != 1 {
		t.Fatalf("%d winners, want exactly 1", winners)
	}
}
