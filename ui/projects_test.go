package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// projectsOf opens the cockpit over the sample projects given, named as
// given, plus a project whose root is gone; each with its real hub.
func projectsOf(t *testing.T, names []string, ps ...*project) Projects {
	t.Helper()
	var list []Project
	for i, p := range ps {
		opt := p.options()
		opt.NoWatch = false
		list = append(list, Project{Name: names[i], Root: p.dir, Options: opt})
	}
	list = append(list, Project{Name: "gone", Root: "/nowhere/gone", Options: ps[0].options(), Problem: "no such folder"})
	pr := NewProjects(list)
	t.Cleanup(pr.Close)
	return pr
}

// The overview: a row per project with its lane counts, workers and queue
// head, and the project that could not be opened as a problem row; enter
// on that row says why, enter on a project opens its panes, 0 comes back,
// > and < step through the projects that opened, passing over the
// problem row.
func TestProjectsOverview(t *testing.T) {
	t.Parallel()
	a, b := newProject(t), newProject(t)
	// beta has one more bug, so its panes are told from alpha's.
	if _, err := b.tree.AddPlanAt(model.Bugs, "beta-only.md", plan("Only in beta", "high", "P1", "small", "", "none"), testNow); err != nil {
		t.Fatal(err)
	}
	tm := teatest.NewTestModel(t, projectsOf(t, []string{"alpha", "beta"}, a, b), teatest.WithInitialTermSize(100, 24))
	waitFor(t, tm, []string{
		"fleetwatch · 3 projects",
		"alpha      2    3    3    2    1    1    1    1  0 live",
		"beta       2    4    3    2    1    1    1    1  0 live",
		"gone     ⚠ /nowhere/gone: no such folder",
	})
	tm.Send(keyMsg("G"))
	tm.Send(keyMsg("enter"))
	waitFor(t, tm, []string{"✗ gone is not open: no such folder"})
	tm.Send(keyMsg("g"))
	tm.Send(keyMsg("enter"))
	waitFor(t, tm, []string{" myapp · 14 plans", "crash-on-save"})
	tm.Send(keyMsg(">"))
	waitFor(t, tm, []string{" myapp · 15 plans", "beta-only"})
	tm.Send(keyMsg(">")) // past gone, round to alpha
	waitFor(t, tm, []string{" myapp · 14 plans"})
	tm.Send(keyMsg("<"))
	waitFor(t, tm, []string{" myapp · 15 plans"})
	tm.Send(keyMsg("0"))
	waitFor(t, tm, []string{"▸ beta"})
	tm.Send(keyMsg("q"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Projects)
	if final.shown != -1 || final.cursor != 1 {
		t.Errorf("after 0: shown %d, cursor %d; want the overview on beta", final.shown, final.cursor)
	}
}

// Inside a project, the keys between projects give way to a text field
// (the filter takes 0 and >), and its help lists them.
func TestProjectsKeysInsideAProject(t *testing.T) {
	t.Parallel()
	a, b := newProject(t), newProject(t)
	tm := teatest.NewTestModel(t, projectsOf(t, []string{"alpha", "beta"}, a, b), teatest.WithInitialTermSize(100, 40))
	waitFor(t, tm, []string{"alpha      2    3    3"})
	tm.Send(keyMsg("enter"))
	waitFor(t, tm, []string{"crash-on-save"})
	tm.Send(keyMsg("?"))
	waitFor(t, tm, []string{"Projects", "0 projects overview", "> next project", "< previous project"})
	tm.Send(keyMsg("esc"))
	tm.Send(keyMsg("/"))
	for _, k := range []string{"0", ">"} {
		tm.Send(keyMsg(k))
	}
	waitFor(t, tm, []string{"/0>"})
	tm.Send(keyMsg("esc"))
	tm.Send(keyMsg("q"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Projects)
	if final.shown != 0 {
		t.Errorf("typing 0 and > in the filter switched to %d", final.shown)
	}
}

// A notice in project beta reaches the header while the operator is in
// alpha, naming beta; the overview counts it on beta's row; reading it
// in beta (N) clears it from alpha's header.
func TestProjectsNoticeElsewhere(t *testing.T) {
	t.Parallel()
	a, b := newProject(t), newProject(t)
	tm := teatest.NewTestModel(t, projectsOf(t, []string{"alpha", "beta"}, a, b), teatest.WithInitialTermSize(100, 24))
	waitFor(t, tm, []string{"beta       2    3    3"})
	tm.Send(keyMsg("enter"))
	waitFor(t, tm, []string{" myapp · 14 plans", "crash-on-save"})
	// mid-1 finishes export-pdf in beta: it waits for a person's review.
	if _, err := b.tree.Complete("in-progress/export-pdf.md", model.ReviewNeeded, planfs.Actor{AgentID: "mid-1"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, tm, []string{"⚑ beta 1"})
	tm.Send(keyMsg("0"))
	waitFor(t, tm, []string{"fleetwatch · 3 projects · ⚑ 1", "0 live    ⚑ 1"})
	tm.Send(keyMsg(">")) // the project after alpha's row: beta
	waitFor(t, tm, []string{" myapp · ⚑ 1"})
	tm.Send(keyMsg("N"))
	waitFor(t, tm, []string{"Notices · 1", "export-pdf"})
	tm.Send(keyMsg("esc"))
	tm.Send(keyMsg("<"))
	tm.Send(keyMsg("q"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Projects)
	if final.shown != 0 {
		t.Fatalf("shown %d, want alpha", final.shown)
	}
	if v := final.View(); strings.Contains(strings.SplitN(v, "\n", 2)[0], "beta") {
		t.Errorf("alpha's header still names beta after its notice was read:\n%s", v)
	}
	if final.list[1].sum.unread != 0 {
		t.Errorf("beta's notice unread after N")
	}
}

// serve's StopMsg: on the overview the cockpit quits saying why; inside a
// project, that project's panes say it, and it quits.
func TestProjectsStop(t *testing.T) {
	t.Parallel()
	a, b := newProject(t), newProject(t)
	for _, inside := range []bool{false, true} {
		pr := projectsOf(t, []string{"alpha", "beta"}, a, b)
		var next tea.Model = pr
		next, _ = next.Update(tea.WindowSizeMsg{Width: 100, Height: 24})
		if inside {
			next, _ = next.Update(keyMsg("enter"))
		}
		next, cmd := next.Update(StopMsg{Reason: "fleetwatch serve is stopping"})
		if !quits(t, &next, cmd) {
			t.Errorf("inside %v: no quit", inside)
		}
		if v := next.View(); !strings.Contains(v, "fleetwatch serve is stopping") {
			t.Errorf("inside %v: the screen does not say why:\n%s", inside, v)
		}
	}
}

// quits runs cmd as the runtime would (a batch's commands, a project's
// messages back into m), and reports whether it comes to tea.Quit. A
// command still waiting after 200 ms (a clock, a hub) is left.
func quits(t *testing.T, m *tea.Model, cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	got := make(chan tea.Msg, 1)
	go func() { got <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-got:
	case <-time.After(200 * time.Millisecond):
		return false
	}
	switch msg := msg.(type) {
	case tea.QuitMsg:
		return true
	case tea.BatchMsg:
		for _, c := range msg {
			if quits(t, m, c) {
				return true
			}
		}
	case projectMsg:
		var next tea.Cmd
		*m, next = (*m).Update(msg)
		return quits(t, m, next)
	}
	return false
}

// At 80 columns the overview sums the ready lanes (rdy = bugs+features)
// and the parked ones (park = ambiguous+blocked), so a row still fits.
func TestProjectsOverviewNarrow(t *testing.T) {
	t.Parallel()
	a, b := newProject(t), newProject(t)
	tm := teatest.NewTestModel(t, projectsOf(t, []string{"alpha", "beta"}, a, b), teatest.WithInitialTermSize(80, 24))
	waitFor(t, tm, []string{"project drft  rdy prog  rev park done  workers", "beta       2    6    2    1    2    1  0 live"})
	tm.Send(keyMsg("q"))
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(Projects)
	for i, line := range strings.Split(final.View(), "\n") {
		if w := ansi.StringWidth(line); w > 80 {
			t.Errorf("line %d is %d cells wide: %q", i, w, line)
		}
	}
}
