package landtest

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"fleetwatch/internal/testkit/fwtest"
)

// Two landers started together: one lands, the other is refused at once
// or lands the next head; each change is on dev exactly once.
func TestRacingLandersLandEachHeadOnce(t *testing.T) {
	t.Parallel()
	dir := landProject(t, passCheck)
	tips := map[string]string{}
	for _, slug := range []string{"a", "b"} {
		tips[slug] = feature(t, dir, slug, map[string]string{slug + ".txt": slug + "\n"})
		queued(t, dir, slug)
	}
	raceLanders(t, dir)
	for slug, tip := range tips {
		wantLanded(t, dir, slug, tip)
	}
	if merges := fwtest.GitOut(t, dir, "rev-list", "--count", "--merges", "dev"); merges != "2" {
		t.Errorf("dev has %s merges, want 2", merges)
	}
}

// Two batch landers started together: one lands the batch, the other is
// refused or finds nothing left; dev moved once, to the checked batch.
func TestRacingBatchLandersLandOnce(t *testing.T) {
	t.Parallel()
	dir := landProject(t, batchCheck)
	tips := fourChanges(t, dir, nil)
	raceLanders(t, dir)
	for slug, tip := range tips {
		wantLanded(t, dir, slug, tip)
	}
	if n := devMoves(t, dir); n != 1 {
		t.Errorf("dev moved %d times, want once", n)
	}
	wantEveryMoveChecked(t, dir)
}

// raceLanders starts two queue lands at once, round after round, until
// both find the queue empty; each must land, be refused as the second
// lander, or find nothing.
func raceLanders(t *testing.T, dir string) {
	t.Helper()
	for round := 0; round < 3; round++ {
		var cmds [2]*exec.Cmd
		var errs [2]bytes.Buffer
		for i := range cmds {
			cmds[i] = fwtest.Cmd(dir, nil, "queue", "land", "--yes")
			cmds[i].Stderr = &errs[i]
			if err := cmds[i].Start(); err != nil {
				t.Fatal(err)
			}
		}
		empty := 0
		for i, c := range cmds {
			err := c.Wait()
			code := c.ProcessState.ExitCode()
			switch {
			case err == nil:
			case code == 1 && strings.Contains(errs[i].String(), "empty"):
				empty++
			case code == 2 && strings.Contains(errs[i].String(), "another queue land"):
			default:
				t.Fatalf("lander %d: exit %d: %s", i, code, errs[i].String())
			}
		}
		if empty == 2 {
			return
		}
	}
}
