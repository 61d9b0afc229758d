package landtest

import (
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// A lander killed with SIGKILL at each step, then run again, lands the
// head exactly once: before the CAS it starts over, after it it finishes.
func TestLandKilledAtEachStepThenRerunFinishes(t *testing.T) {
	t.Parallel()
	for _, step := range []string{"land:built", "land:checked", "land:cas", "land:moved", "land:pinned"} {
		t.Run(strings.TrimPrefix(step, "land:"), func(t *testing.T) {
			t.Parallel()
			dir := landProject(t, passCheck)
			fwtest.GitOut(t, dir, "checkout", "-q", "dev")
			tip := feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
			queued(t, dir, "a")
			r := land(t, dir, []string{"FLEETWATCH_FAILPOINT=" + step})
			if r.Code != -9 {
				t.Fatalf("the failpoint did not kill the lander: %v", r)
			}
			r = land(t, dir, nil)
			fwtest.Want(t, r, 0)
			wantLanded(t, dir, "a", tip)
			if got := readFile(t, dir, "a.txt"); got != "a\n" {
				t.Errorf("the checkout of dev has a.txt = %q", got)
			}
			if merges := fwtest.GitOut(t, dir, "rev-list", "--count", "--merges", "dev"); merges != "1" {
				t.Errorf("dev has %s merges, want 1", merges)
			}
			wantNotReady(t, land(t, dir, nil), "empty")
		})
	}
}
