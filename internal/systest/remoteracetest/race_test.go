// Package remoteracetest races eight clones' `work-once --claims git
// --once` for every plan of a bare remote, by path and through git daemon:
// a package of its own, as its rounds take most of a minute under -race.
package remoteracetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/systest/remotetest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }

// TestRaceEveryPlanClaimedOnce races 8 clones, each running `work-once
// --claims git --once` until nothing is left, for 100 plans (32 under
// -race), three rounds
// (by path, through git daemon, by path): every plan is claimed exactly
// once across all clones, and the remote holds one lease ref per plan.
func TestRaceEveryPlanClaimedOnce(t *testing.T) {
	const clones = 8
	n, rounds := 100, 3
	if raceDetector {
		n = 32
	}
	if testing.Short() {
		rounds = 1
	}
	for round := range rounds {
		t.Run(fmt.Sprintf("round%d", round), func(t *testing.T) {
			f := remotetest.NewFleet(t, remotetest.Plans(n)...)
			url := f.Bare
			if round == 1 {
				url = f.Daemon(t)
			}
			dirs := make([]string, clones)
			dirs[0] = f.Clone(t, url)
			remotetest.NeedBackend(t, dirs[0])
			for i := 1; i < clones; i++ {
				dirs[i] = f.Clone(t, url)
			}
			got := make([][]string, clones)
			var wg sync.WaitGroup
			for i := range clones {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got[i] = drain(t, dirs[i], fmt.Sprintf("c%d", i), n)
				}()
			}
			wg.Wait()
			by := map[string]int{}
			total := 0
			for i, slugs := range got {
				for _, s := range slugs {
					if prev, dup := by[s]; dup {
						t.Errorf("%s claimed by c%d and c%d", s, prev, i)
					}
					by[s] = i
					total++
				}
			}
			if len(by) != n {
				t.Errorf("%d of %d plans claimed (%d claims)", len(by), n, total)
			}
			if refs := f.Leases(t); len(refs) != n {
				t.Errorf("the remote holds %d lease refs, want %d", len(refs), n)
			}
		})
	}
}

// drain runs `work-once --once` in dir until it claims nothing (exit 1),
// at most limit+1 times, and returns the slugs it claimed.
func drain(t *testing.T, dir, agent string, limit int) []string {
	var slugs []string
	for range limit + 1 {
		r := fwtest.Run(t, dir, "work-once", "--root", dir, "--agent-id", agent, "--once")
		switch r.Code {
		case 0:
			slugs = append(slugs, remotetest.SlugOf(r.Stdout))
			continue
		case 1:
			return slugs
		}
		t.Errorf("%s: %v", agent, r)
		return slugs
	}
	t.Errorf("%s claimed more than %d plans", agent, limit)
	return slugs
}
