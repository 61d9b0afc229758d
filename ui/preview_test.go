package ui

import (
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/model"
)

// On a wide terminal the preview below the plans scrolls in place with
// ctrl+d and ctrl+u, and keeps to the first 64 KiB of a huge plan.
func TestPreviewScrollsInPlace(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	long := "# Long plan\n\n- **Preferred models:** mid\n\n" + strings.Repeat("A line of the plan's body.\n\n", 4000)
	if _, err := p.tree.AddPlanAt(model.Bugs, "long.md", long, testNow); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, p, 160, 48)
	h.selectPlan("bugs/long.md")
	if !h.m.Keys.Plans.PreviewDown.Enabled() {
		t.Fatal("ctrl+d is disabled with the preview on screen")
	}
	h.press("ctrl+d")
	if h.m.pv.VP.YOffset == 0 {
		t.Fatalf("ctrl+d did not scroll the preview:\n%s", h.view())
	}
	h.press("ctrl+u")
	if h.m.pv.VP.YOffset != 0 {
		t.Fatalf("ctrl+u did not scroll back: offset %d", h.m.pv.VP.YOffset)
	}
	h.press("enter")
	h.press("G")
	if !strings.Contains(h.view(), "only the first 64 KiB") {
		t.Errorf("a 100 KiB plan's preview does not say it was cut:\n%s", h.view())
	}
}
