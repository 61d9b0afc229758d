package batchkilltest

import (
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/systest/landkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// A lander killed at each step of a batch and its bisection, then run
// again, finishes: nothing lost, nothing landed twice.
func TestBatchKilledAtEachStepThenRerunFinishes(t *testing.T) {
	t.Parallel()
	for _, step := range []string{"batch:built", "bisect:round", "batch:checked", "batch:cas", "land:moved", "land:pinned"} {
		t.Run(strings.ReplaceAll(step, ":", "-"), func(t *testing.T) {
			t.Parallel()
			dir := landkit.LandProject(t, landkit.BatchCheck)
			fwtest.GitOut(t, dir, "checkout", "-q", "dev")
			tips := landkit.FourChanges(t, dir, map[string]map[string]string{"c": {"bad": "c\n"}})
			if r := landkit.Land(t, dir, []string{"FLEETWATCH_FAILPOINT=" + step}); r.Code != -9 {
				t.Fatalf("the failpoint did not kill the lander: %v", r)
			}
			if step == "bisect:round" {
				if b := landkit.BatchOf(t, dir); b.Bisection == nil || b.Bisection.Culprit != "c" || b.Bisection.Passing != 2 {
					t.Errorf("the listing after one round of bisection: %+v", b)
				}
			}
			fwtest.Want(t, landkit.Land(t, dir, nil), 0)
			for _, s := range []string{"a", "b", "d"} {
				landkit.WantLanded(t, dir, s, tips[s])
			}
			if st, _ := landkit.StateOf(t, dir, "c"); st != "failed" {
				t.Errorf("c is %q", st)
			}
			if got := landkit.ReadFile(t, dir, "d.txt"); got != "d\n" {
				t.Errorf("the checkout of dev has d.txt = %q", got)
			}
			landkit.WantEveryMoveChecked(t, dir)
			landkit.WantNoNotice(t, dir)
		})
	}
}
