package ui

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/demo"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/panes/events"
	"github.com/fleetwatch/fleetwatch/ui/panes/plans"
	"github.com/fleetwatch/fleetwatch/ui/panes/trees"
	"github.com/fleetwatch/fleetwatch/ui/panes/workers"
)

// fit promises exactly w cells, but when the cut lands inside a wide
// character it returns w-1, so every column after a CJK title or slug
// shifts one cell left (pri, val and the tier ranks no longer sit under
// their headers).
func TestFitIsExactWidthAfterCuttingWideChars(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"日本語のタイトル", "宽字符-slug-名前", "ｆｕｌｌｗｉｄｔｈ"} {
		for w := 1; w <= 12; w++ {
			if got := ansi.StringWidth(kit.Fit(s, w)); got != w {
				t.Errorf("fit(%q, %d) is %d cells wide: %q", s, w, got, kit.Fit(s, w))
			}
		}
	}
}

// The same seen on screen: the row of a plan with a CJK title has its
// priority one column left of every other row's.
func TestWideTitleKeepsColumnsAligned(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	if _, err := p.tree.AddPlanAt(model.Bugs, "cjk.md", plan("日本語のタイトルはとても長いです日本語のタイトルはとても長いです", "high", "P1", "small", "", "none"), testNow.Add(-7*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, p, 120, 32)
	v := h.view()
	col := map[string]int{}
	for _, l := range strings.Split(v, "\n") {
		for _, slug := range []string{"cjk", "crash-on-save"} {
			if strings.Contains(l, " "+slug+" ") {
				i := strings.Index(l, " P1 ")
				col[slug] = ansi.StringWidth(l[:i])
			}
		}
	}
	if col["cjk"] != col["crash-on-save"] {
		t.Errorf("the priority column is at cell %d on the CJK row and %d on the others:\n%s", col["cjk"], col["crash-on-save"], v)
	}
}

// Rank cells are three cells wide below 110 columns of table (every
// terminal under ~135 wide), so rank 100? or 1000 is cut to "10…" or
// "100…": an operator reads a number that is not the rank.
func TestRankCellsAreNotCut(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	for i := range 105 {
		// A model no tier names: fit unknown for every tier, so each
		// plan gets a rank with `?` in all four columns.
		if _, err := p.tree.AddPlanAt(model.Features, fmt.Sprintf("many-%03d.md", i), plan(fmt.Sprintf("Plan %d", i), "low", "P3", "qwen3-32b", "", "none"), testNow.Add(-time.Duration(i+1)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, p, 120, 32)
	h.press("]", "G")
	v := h.view()
	if strings.Contains(v, "10…") || strings.Contains(v, "11…") {
		t.Errorf("rank numbers are cut on screen:\n%s", v)
	}
}

// demoNow is the moment the demo project shows, as the demo's own tests.
var demoNow = time.Date(2025, 3, 14, 15, 0, 0, 0, time.UTC)

// demoProject builds the demo project (ui/demo: plans in every
// lane, leases live and expired, worktrees, workers) with its clock at
// demoNow.
func demoProject(t testing.TB) *project {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir, err := demo.Create(filepath.Join(root, "jotter"), demoNow, []string{"/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	tree.Now = func() time.Time { return demoNow }
	return &project{root: root, dir: dir, tree: tree}
}

// cellOf is the cell at which s starts in line, -1 when it is not there.
func cellOf(line, s string) int {
	i := strings.Index(line, s)
	if i < 0 {
		return -1
	}
	return ansi.StringWidth(line[:i])
}

// On the demo at 160 columns every cell but a title is whole: the slug,
// why a plan waits (or was parked), who holds it; a lease's plan, owner
// and origin; a worktree's branch and path; a worker's tier/model, plan
// and note; an event's plan, move, agent and reason.
func TestDemoAt160CutsNothingButTitles(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	h := newHarness(t, p, 160, 48)
	var missing []string
	need := func(v string, cells ...string) {
		for _, c := range cells {
			if c != "" && !strings.Contains(v, c) {
				missing = append(missing, c)
			}
		}
	}
	for _, lane := range model.Lanes {
		for plansOf(&h.m).Lane() != lane {
			h.press("]")
		}
		v := h.view()
		for _, r := range plansOf(&h.m).Rows() {
			why, _ := plans.WhyText(h.m.d, r)
			who, _ := plans.WhoText(r, h.m.Now)
			need(v, " "+r.Plan.Slug+" ", why, who)
		}
	}
	h.press("2")
	v := h.view()
	for _, l := range leasesOf(&h.m).Rows() {
		need(v, l.Rel, l.AgentID, l.Origin)
	}
	h.press("3")
	v = h.view()
	for _, s := range treesOf(&h.m).Rows() {
		need(v, s.AgentID, trees.TreeBranch(&s), strings.TrimPrefix(s.Path, p.dir+"/"))
	}
	h.press("4")
	v = h.view()
	for _, r := range h.m.wrk.rows {
		need(v, r.St.AgentID, workers.What(&r.St, workersOf(&h.m).Bare()), kit.PlanSlug(r.St.Plan), strings.TrimPrefix(r.St.Note, "on "))
	}
	h.press("5")
	v = h.view()
	// The rows on screen: the demo's log is longer than one screen.
	ev := eventsOf(&h.m)
	for i := ev.Offset; i < min(ev.Len(), ev.Offset+ev.Height); i++ {
		if e := ev.EventAt(i); e != nil {
			need(v, e.Slug, events.MoveText(e), e.AgentID, e.Reason)
		}
	}
	if len(missing) > 0 {
		t.Errorf("cut or missing at 160 columns: %q", missing)
	}
}

// At 80, 120 and 160 columns every table still fits its width and each
// plan row's priority sits under the header's "pri", in every lane.
func TestDemoColumnsFitAndAlign(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	for _, size := range [][2]int{{80, 24}, {120, 32}, {160, 48}} {
		h := newHarness(t, p, size[0], size[1])
		for _, lane := range model.Lanes {
			for plansOf(&h.m).Lane() != lane {
				h.press("]")
			}
			lines := strings.Split(h.view(), "\n") // checks every line fits
			at := -1
			for _, l := range lines {
				if strings.Contains(l, " slug ") {
					at = cellOf(l, "pri")
				}
			}
			for _, r := range plansOf(&h.m).Rows() {
				for _, l := range lines {
					if strings.Contains(l, " "+r.Plan.Slug+" ") || strings.Contains(l, " "+r.Plan.Slug[:min(len(r.Plan.Slug), 6)]) {
						if got := cellOf(l, " "+r.Plan.Header.Priority+" ") + 1; got != at {
							t.Errorf("%dx%d %s: %s's priority at cell %d, the header's at %d:\n%s", size[0], size[1], lane, r.Plan.Slug, got, at, l)
						}
						break
					}
				}
			}
		}
	}
}

// The widths are measured when the rows are rebuilt, so a view costs
// what it did: every pane's columns are kept on its sub-model.
func TestColumnsMeasuredPerRebuild(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	h := newHarness(t, p, 160, 48)
	slug, deps, wantSlug, wantDeps := plansOf(&h.m).Widths(h.m.d, plansOf(&h.m).Rows())
	if slug < wantSlug || deps < wantDeps {
		t.Errorf("plans columns (slug %d, deps %d) do not hold the widest cells (slug %d, deps %d)", slug, deps, wantSlug, wantDeps)
	}
	if plan, owner := leasesOf(&h.m).Widths(); owner < len("small-2") || plan < len("in-progress/duplicate-tags-by-case.md") {
		t.Errorf("lease columns (plan %d, owner %d) cut the demo's owners or plans", plan, owner)
	}
}

// whyWidth measures without building the text: it must agree with the
// text shown, for every kind of reason (none, met, unmet, skipped,
// parked with and without a reason).
func TestWhyWidthIsTheTextsWidth(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	// Skipped: git refuses the branch a slug ending in a dot makes, and
	// share+d and share-d would share feature/share-d.
	for _, name := range []string{"trailing-dot..md", "under_score.md", "9lives.md", "-dash.md", "share+d.md", "share-d.md"} {
		if _, err := p.tree.AddPlanAt(model.Bugs, name, plan("Odd name", "low", "P3", "small", "", "none"), demoNow); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, p, 160, 48)
	skips := map[string]int{}
	kinds := map[string]bool{}
	for i := range h.m.d.Board.Rows {
		r := &h.m.d.Board.Rows[i]
		text, _ := plans.WhyText(h.m.d, r)
		kinds[strings.Fields(text + " x")[0]] = true
		if got, want := plans.WhyWidth(h.m.d, r, skips, 0), ansi.StringWidth(text); got != want {
			t.Errorf("%s: whyWidth %d, the text %q is %d wide", r.Plan.Rel, got, text, want)
		}
	}
	for _, k := range []string{"none", "met", "UNMET", "SKIPPED"} {
		if !kinds[k] {
			t.Errorf("no row's reason is %s: %v", k, kinds)
		}
	}
}

// BenchmarkMeasurePlans10k is what sizing the columns costs a refresh
// that brings a new board: every row of the lane measured once.
func BenchmarkMeasurePlans10k(b *testing.B) {
	m := benchModel(b, 10_000)
	rows := plansOf(&m).Rows()
	b.ResetTimer()
	for b.Loop() {
		plansOf(&m).Widths(m.d, rows)
	}
}
