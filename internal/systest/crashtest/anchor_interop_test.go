package crashtest

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

// TestRaceWithAnchorWorkers races fleetwatch worker processes against
// Python workers that follow anchor's claim protocol on one tree: every plan
// is claimed exactly once across both tools, and none is lost.
func TestRaceWithAnchorWorkers(t *testing.T) {
	t.Parallel()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed; .ci/run installs it")
	}
	script, _ := filepath.Abs("testdata/anchor_claim.py")
	var plans []fwtest.Plan
	for i := range 120 {
		plans = append(plans, fwtest.Plan{Rel: fmt.Sprintf("features/p%03d.md", i)})
	}
	dir := fwtest.NewTree(t, plans...)
	barrier := filepath.Join(t.TempDir(), "go")

	const each = 8
	outs := make([]bytes.Buffer, 2*each)
	errs := make([]bytes.Buffer, 2*each)
	var cmds []*exec.Cmd
	for i := range each {
		fleet := fwtest.Cmd(dir, []string{fwtest.BarrierEnv + "=" + barrier}, "work-once", "--max-plans", "1000", "--agent-id", fmt.Sprintf("fleet-%d", i))
		anchor := exec.Command(python, script, filepath.Join(dir, ".plans"), fmt.Sprintf("anchor-%d", i), barrier, "0.05")
		cmds = append(cmds, fleet, anchor)
	}
	for i, c := range cmds {
		c.Stdout, c.Stderr = &outs[i], &errs[i]
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	fwtest.OpenBarrier(t, barrier, len(cmds))
	var wg sync.WaitGroup
	for i, c := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Wait(); err != nil && c.ProcessState.ExitCode() > 1 {
				t.Errorf("worker %d: %v: %s", i, err, errs[i].String())
			}
		}()
	}
	wg.Wait()

	claimedBy := map[string]int{}
	tools := map[string]int{}
	for i := range cmds {
		for _, line := range strings.Fields(outs[i].String()) {
			rel := strings.TrimPrefix(line, filepath.Join(dir, ".plans")+"/")
			if prev, dup := claimedBy[rel]; dup {
				t.Errorf("%s claimed twice, by workers %d and %d", rel, prev, i)
			}
			claimedBy[rel] = i
			tools[[]string{"fleetwatch", "anchor"}[i%2]]++
		}
	}
	if len(claimedBy) != 120 {
		t.Errorf("%d plans claimed, want 120", len(claimedBy))
	}
	if got := len(fwtest.Contents(t, dir)); got != 120 {
		t.Errorf("%d plans on disk, want 120", got)
	}
	if tools["fleetwatch"] == 0 || tools["anchor"] == 0 {
		t.Errorf("one tool never claimed (%v): the race was not exercised", tools)
	}
	t.Logf("claims: %v", tools)
}
