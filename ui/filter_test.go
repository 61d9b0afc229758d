package ui

import (
	"slices"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/ui/panes/workers"
)

// `/` in Plans looks in every lane at once: the lane list counts each
// lane's matches, enter lands on a lane that has some, and the filter
// text stays on screen until esc.
func TestFilterPlansAcrossLanesWithCounts(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := newHarness(t, p, size[0], size[1])
		h.press("/")
		h.typeText("import") // csv-import (review-needed), old-import (in-progress)
		if n := plansOf(&h.m).Matched(); n[model.ReviewNeeded] != 1 || n[model.InProgress] != 1 || n[model.Bugs] != 0 {
			t.Errorf("%dx%d: matches per lane %v", size[0], size[1], n)
		}
		v := h.view()
		want := []string{"in-progress    1/2", "review-needed  1/1", "bugs           0/3"}
		if size[0] < 100 {
			// The strip has no room for the totals: matches alone, uncut.
			want = []string{" prog 1 ", " rev 1 ", "[bugs 0]"}
			if strip := strings.Split(v, "\n")[1]; strings.Contains(strip, "…") {
				t.Errorf("the lane strip is cut: %q", strip)
			}
		}
		for _, w := range want {
			if !strings.Contains(v, w) {
				t.Errorf("%dx%d: the lane list does not show %q:\n%s", size[0], size[1], w, v)
			}
		}
		h.press("enter")
		if plansOf(&h.m).Lane() != model.InProgress || !slices.Equal(h.rows(), []string{"in-progress/old-import.md"}) {
			t.Errorf("%dx%d: enter left lane %s rows %v, want the first lane with a match", size[0], size[1], plansOf(&h.m).Lane(), h.rows())
		}
		if f := h.footer(); !strings.Contains(f, "filter: import (esc clears)") {
			t.Errorf("%dx%d: the filter is not shown while it applies: %q", size[0], size[1], f)
		}
		if v := h.view(); size[0] >= 100 && !strings.Contains(v, "in-progress · 1 of 2 · /import") {
			t.Errorf("%dx%d: the table's title does not name the filter:\n%s", size[0], size[1], v)
		}
		h.press("esc")
		if plansOf(&h.m).Active() || len(h.rows()) != 2 || strings.Contains(h.view(), "1/2") {
			t.Errorf("%dx%d: esc did not clear the filter: rows %v", size[0], size[1], h.rows())
		}
	}
}

// `/` narrows every pane, each with its own filter: typed in Leases it
// leaves the plans alone; each pane's title names it; esc clears it.
func TestFilterEveryPane(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addWorktrees(t)
	p.addWorkers(t)
	cases := []struct {
		pane, text string
		rows       func(h *harness) int
		want       int
	}{
		{"2", "small-2", func(h *harness) int { return leasesOf(&h.m).Len() }, 1},
		{"3", "mid-1", func(h *harness) int { return treesOf(&h.m).Len() }, 1},
		{"4", "stale", func(h *harness) int { return workersOf(&h.m).Len() }, 1},
		{"5", "needs smtp", func(h *harness) int { return eventsOf(&h.m).Len() }, 1},
	}
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := newHarness(t, p, size[0], size[1])
		plans := len(h.rows())
		for _, c := range cases {
			h.press(c.pane)
			before := c.rows(h)
			h.press("/")
			h.typeText(c.text)
			h.press("enter")
			if got := c.rows(h); got != c.want || before <= c.want {
				t.Errorf("%dx%d pane %s /%s: %d rows of %d, want %d:\n%s", size[0], size[1], c.pane, c.text, got, before, c.want, h.view())
			}
			v := h.view()
			if !strings.Contains(v, "filter: "+c.text+" (esc clears)") || size[0] >= 100 && !strings.Contains(v, "· /"+c.text) {
				t.Errorf("%dx%d pane %s: the filter is not on screen:\n%s", size[0], size[1], c.pane, v)
			}
			if len(h.rows()) != plans {
				t.Errorf("pane %s's filter narrowed the plans: %v", c.pane, h.rows())
			}
			h.press("/")
			h.typeText("zzz")
			h.press("enter")
			if v := h.view(); c.rows(h) != 0 || !strings.Contains(v, "nothing matches /"+c.text+"zzz") {
				t.Errorf("pane %s: no match should say so:\n%s", c.pane, v)
			}
			h.press("esc")
			if got := c.rows(h); got != before {
				t.Errorf("pane %s: esc left %d rows, want %d", c.pane, got, before)
			}
		}
	}
}

// The selection follows a worker through the filter: what x and l act on
// is the row under the cursor, not the row at that index unfiltered.
func TestFilteredWorkersSelectTheRowShown(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.addWorkers(t)
	h := newHarness(t, p, 120, 32)
	h.press("4", "/")
	h.typeText("stale")
	h.press("enter")
	r := h.m.selectedWorker()
	if r == nil || !strings.Contains(h.view(), "▸   "+r.St.AgentID) {
		t.Fatalf("selected %+v, screen:\n%s", r, h.view())
	}
	if s, _ := workers.HealthCell(r); s != "◌ stale" {
		t.Errorf("the selected worker is %q, not the stale one shown", s)
	}
}
