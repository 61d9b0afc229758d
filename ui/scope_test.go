package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// scopeStates are two running builds as the scope scanner wrote them:
// mid-1 touched two paths out of its scope, mid-3 stays in scope; both
// touch src/export/pdf.go.
func scopeStates() []look.State {
	at := func(ago time.Duration) look.Stamp { return look.Stamp{Time: testNow.Add(-ago)} }
	return []look.State{
		{PID: 4123, AgentID: "mid-1", Tier: "mid", Plan: "in-progress/export-pdf.md", Host: "build-7", Mode: "build",
			Started: at(10 * time.Minute), LastHeartbeat: at(20 * time.Second), HeartbeatEvery: 30, State: look.StateRunning,
			Scope: "2 paths out of scope", Touched: []string{".plans/bugs/x.md", "README.md", "src/export/pdf.go"},
			Violations: []string{".plans/bugs/x.md", "README.md"}, Note: "running the executor"},
		{PID: 4200, AgentID: "mid-3", Tier: "mid", Plan: "in-progress/old-import.md", Host: "build-7", Mode: "build",
			Started: at(5 * time.Minute), LastHeartbeat: at(10 * time.Second), HeartbeatEvery: 30, State: look.StateRunning,
			Scope: "in scope", Touched: []string{"src/export/pdf.go", "src/import/csv.go"}},
	}
}

var pdfOverlap = look.Overlap{A: "mid-1", B: "mid-3", Paths: []string{"src/export/pdf.go"}, Checked: true, Conflict: true,
	Conflicts: []string{"src/export/pdf.go"}}

// writeScopeStates writes scopeStates' files, as the drivers do.
func (p *project) writeScopeStates(t testing.TB) {
	t.Helper()
	for _, st := range scopeStates() {
		if err := look.WriteState(p.dir, st); err != nil {
			t.Fatal(err)
		}
	}
}

// radarSaw is the radar's look, as look.Overlaps would report it, sent
// once the Workers pane shows.
func (h *harness) radarSaw(o ...look.Overlap) {
	h.t.Helper()
	h.send(workersMsg{states: scopeStates(), radar: true, overlaps: o})
}

func scopeHarness(t *testing.T, w, hgt int) *harness {
	t.Helper()
	p := newProject(t)
	p.writeScopeStates(t)
	h := newHarness(t, p, w, hgt)
	h.press("4")
	h.radarSaw(pdfOverlap)
	return h
}

func rowOf(t *testing.T, v, agent string) string {
	t.Helper()
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(l, " "+agent+" ") {
			return l
		}
	}
	t.Fatalf("no row for %s:\n%s", agent, v)
	return ""
}

func TestWorkerRowShowsScopeAndOverlap(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := scopeHarness(t, size[0], size[1])
		v := h.view()
		if r := rowOf(t, v, "mid-1"); !strings.Contains(r, "⚠ 2 out of scope") {
			t.Errorf("%v: mid-1's row: %q", size, r)
		}
		r := rowOf(t, v, "mid-3")
		if !strings.Contains(r, "in scope") {
			t.Errorf("%v: mid-3's row: %q", size, r)
		}
		if size[0] > 100 && !strings.Contains(r, "overlaps mid-1: src/export/pdf.go (conflict)") {
			t.Errorf("%v: mid-3's row lacks the overlap: %q", size, r)
		}
	}
}

func TestWorkerOverlapMerges(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.writeScopeStates(t)
	h := newHarness(t, p, 160, 48)
	o := pdfOverlap
	o.Conflict, o.Conflicts = false, nil
	h.press("4")
	h.radarSaw(o)
	if r := rowOf(t, h.view(), "mid-1"); !strings.Contains(r, "overlaps mid-3: src/export/pdf.go (merges)") {
		t.Errorf("mid-1's row: %q", r)
	}
	// A reading without the radar keeps the last look.
	h.send(workersMsg{states: scopeStates()})
	if r := rowOf(t, h.view(), "mid-1"); !strings.Contains(r, "(merges)") {
		t.Errorf("after a reading without the radar: %q", r)
	}
}

func TestWorkerDetailListsTouchedAndViolations(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.writeScopeStates(t)
	h := newHarness(t, p, 120, 48)
	h.press("4")
	h.radarSaw(pdfOverlap)
	h.press("g", "enter")
	v := h.view()
	for _, want := range []string{"Scope", "2 paths out of scope", "⚠ README.md", "⚠ .plans/bugs/x.md", "3 paths touched",
		"src/export/pdf.go", "overlaps mid-3: src/export/pdf.go (conflict)", "conflicts in src/export/pdf.go"} {
		if !strings.Contains(v, want) {
			t.Errorf("the detail lacks %q:\n%s", want, v)
		}
	}
}

// The radar looks at most every radarEvery; a reading in between leaves
// it due, and the clock's tick asks again once the time has come.
func TestRadarAtMostEveryFewSeconds(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	if localOf(&h.m).radarAt.IsZero() && localOf(&h.m).radarDue {
		t.Fatal("the first reading left the radar due")
	}
	localOf(&h.m).radarAt = time.Now()
	h.send(stateChangeMsg{})
	if !localOf(&h.m).radarDue {
		t.Error("a reading right after the radar did not leave it due")
	}
	if cmd := h.m.feed.due(&h.m); cmd != nil {
		t.Error("the radar is asked for again within radarEvery")
	}
	localOf(&h.m).radarAt = time.Now().Add(-radarEvery)
	if cmd := h.m.feed.due(&h.m); cmd == nil {
		t.Error("the radar is not asked for once radarEvery passed")
	}
	if localOf(&h.m).radarDue {
		t.Error("asking for the radar left it due")
	}
}

// Scope violations, overlaps and proposals become notices once, after the
// first look.
func TestNoticesForScopeOverlapAndProposal(t *testing.T) {
	t.Parallel()
	p, h, out := noticeHarness(t, 120, 36, false)
	h.radarSaw(pdfOverlap)
	p.addProposal(t)
	h.send(changeMsg{})
	var kinds []string
	for _, e := range h.m.notes.list {
		kinds = append(kinds, string(e.Kind)+": "+e.Text)
	}
	all := strings.Join(kinds, "\n")
	for _, want := range []string{
		"proposal: search-history: reasoner-1's plan waits for approval",
		"scope: mid-1 touched 2 paths out of scope on in-progress/export-pdf.md: .plans/bugs/x.md, README.md",
		"overlap: mid-1 and mid-3 both touch src/export/pdf.go: their changes conflict",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the notices lack %q:\n%s", want, all)
		}
	}
	if out.count() == 0 {
		t.Error("no bell for the new notices")
	}
	n := len(h.m.notes.list)
	h.radarSaw(pdfOverlap)
	h.send(changeMsg{})
	if len(h.m.notes.list) != n {
		t.Errorf("the same facts noticed again: %d notices, then %d", n, len(h.m.notes.list))
	}
	// enter on the proposal's notice leads to the inbox.
	h.press("N")
	for i, e := range h.m.notes.list {
		if e.Kind == model.NoticeProposal {
			for j := 0; j < i; j++ {
				h.press("j")
			}
		}
	}
	h.press("enter")
	if h.m.pane != inboxPane || inboxOf(&h.m).Row() == nil || inboxOf(&h.m).Row().Slug != "search-history" {
		t.Errorf("enter on the proposal's notice: pane %s\n%s", paneSpecs[h.m.pane].name, h.view())
	}
}
