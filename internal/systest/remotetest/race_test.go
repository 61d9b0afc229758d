package remotetest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// TestRecoverersRace: two clones that have both watched one expired lease
// for its TTL plus grace race to take it over; exactly one wins.
func TestRecoverersRace(t *testing.T) {
	t.Parallel()
	f := NewFleet(t, Plans(1)...)
	a, b, c := f.Clone(t, f.Bare), f.Clone(t, f.Bare), f.Clone(t, f.Bare)
	NeedBackend(t, a)
	fwtest.Want(t, fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "holder", "--once", "--lease-ttl", "1"), 0)
	slug := "p000"
	// Each recoverer's own clock starts when it first sees the lease.
	for _, d := range []string{b, c} {
		if h := List(t, d, "r").Holder(slug); h != "holder" {
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
	if h := List(t, a, "holder").Holder(slug); h != "r0" && h != "r1" {
		t.Errorf("after the takeover --list says %q holds %s", h, slug)
	}
}
