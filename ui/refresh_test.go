package ui

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

func TestCountdownMovesOnTick(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 120, 32)
	h.press("2")
	if v := h.view(); !strings.Contains(v, "in 50m00s") {
		t.Fatalf("leases pane:\n%s", v)
	}
	p.at(-10 * time.Second)
	h.send(tickMsg(testNow))
	if v := h.view(); !strings.Contains(v, "in 49m50s") {
		t.Errorf("ten seconds on, the lease countdowns did not move:\n%s", v)
	}
	h.press("1")
	h.selectPlan("in-progress/old-import.md")
	if v := h.view(); !strings.Contains(v, "mid-1 49m50s") {
		t.Errorf("the plans pane's held-by countdown did not move:\n%s", v)
	}
}

func TestSelectedRowHighlightAfterReloadOnAnotherPane(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	opt := p.options()
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	r.SetHasDarkBackground(true)
	opt.Renderer = r
	m := New(opt)
	m.ticking = true
	h := &harness{t: t, p: p, m: m}
	h.send(tea.WindowSizeMsg{Width: 120, Height: 32})
	h.settle(h.m.Init())
	selectedRow := func() string {
		for _, l := range strings.Split(h.m.View(), "\n") {
			if l = ansi.Strip(l); strings.Contains(l, "▸ ● crash-on-save") {
				return l
			}
		}
		t.Fatalf("no selected crash-on-save row:\n%s", ansi.Strip(h.m.View()))
		return ""
	}
	before := selectedRow()
	h.press("2")
	h.send(changeMsg{}) // the watcher reloads while the Leases pane is up
	h.press("1")
	if after := selectedRow(); after != before {
		t.Errorf("the selected row changed after a reload on another pane:\nbefore %q\nafter  %q", before, after)
	}
}

func TestTreeVanishedWarningShowsOnNarrowTerminal(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	if err := os.RemoveAll(p.tree.Plans); err != nil {
		t.Fatal(err)
	}
	h.send(changeMsg{})
	if v := h.view(); !strings.Contains(v, "⚠") {
		t.Errorf("nothing on an 80×24 screen says the tree is gone:\n%s", v)
	}
}

// A request while one runs is remembered once, however many come: the
// work runs again once, never queued.
func TestRefreshRunsOnceMore(t *testing.T) {
	t.Parallel()
	var r refresh
	cmd := func() tea.Msg { return nil }
	if r.request(cmd) == nil {
		t.Fatal("the first request did not start")
	}
	for range 3 {
		if r.request(cmd) != nil {
			t.Fatal("a request started while one ran")
		}
	}
	if !r.done() {
		t.Fatal("the requests made meanwhile were forgotten")
	}
	if r.request(cmd) == nil {
		t.Fatal("the request once more did not start")
	}
	if r.done() {
		t.Fatal("one more ran twice")
	}
}
