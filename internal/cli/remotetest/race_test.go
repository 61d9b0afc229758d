package remotetest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"fleetwatch/internal/testkit/fwtest"
)

// TestRaceEveryPlanClaimedOnce races 8 clones, each running `work-once
// --claims git --once` until nothing is left, for 100 plans, three rounds
// (by path, through git daemon, by path): every plan is claimed exactly
// once across all clones, and the remote holds one lease ref per plan.
func TestRaceEveryPlanClaimedOnce(t *testing.T) {
	const clones, n = 8, 100
	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	for round := range rounds {
		t.Run(fmt.Sprintf("round%d", round), func(t *testing.T) {
			f := newFleet(t, plans(n)...)
			url := f.bare
			if round == 1 {
				url = f.daemon(t)
			}
			dirs := make([]string, clones)
			dirs[0] = f.clone(t, url)
			needBackend(t, dirs[0])
			for i := 1; i < clones; i++ {
				dirs[i] = f.clone(t, url)
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
			if refs := f.leases(t); len(refs) != n {
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
			slugs = append(slugs, slugOf(r.Stdout))
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

// TestRecoverersRace: two clones that have both watched one expired lease
// for its TTL plus grace race to take it over; exactly one wins.
func TestRecoverersRace(t *testing.T) {
	f := newFleet(t, plans(1)...)
	a, b, c := f.clone(t, f.bare), f.clone(t, f.bare), f.clone(t, f.bare)
	needBackend(t, a)
	fwtest.Want(t, fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "holder", "--once", "--lease-ttl", "1"), 0)
	slug := "p000"
	// Each recoverer's own clock starts when it first sees the lease.
	for _, d := range []string{b, c} {
		if h := list(t, d, "r").holder(slug); h != "holder" {
			t.Fatalf("--list in a recoverer: holder %q, want holder", h)
		}
	}
	fwtest.WaitFor(t, "the lease seen unchanged for TTL plus grace", 20*time.Second, func() bool {
		r := fwtest.Run(t, b, "work-once", "--root", b, "--agent-id", "probe", "--list", "--json")
		return r.Code == 0 && strings.Contains(r.Stdout, `"expired":true`)
	})
	// The other recoverer first saw it a moment later.
	time.Sleep(time.Second)
	codes := make([]int, 2)
	outs := make([]string, 2)
	var wg sync.WaitGroup
	for i, d := range []string{b, c} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := fwtest.Run(t, d, "work-once", "--root", d, "--agent-id", fmt.Sprintf("r%d", i), "--recover", "--slug", slug, "--lease-ttl", "600")
			codes[i], outs[i] = r.Code, r.String()
		}()
	}
	wg.Wait()
	wins := 0
	for i, code := range codes {
		switch code {
		case 0:
			wins++
		case 1:
		default:
			t.Errorf("recoverer %d: %s", i, outs[i])
		}
	}
	if wins != 1 {
		t.Fatalf("%d recoverers won, want 1:\n%s\n%s", wins, outs[0], outs[1])
	}
	if h := list(t, a, "holder").holder(slug); h != "r0" && h != "r1" {
		t.Errorf("after the takeover --list says %q holds %s", h, slug)
	}
}
