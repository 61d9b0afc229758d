package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// A parked plan's row and preview say why it was parked (the reason the
// park verb wrote to the event log); a plan check warns about has `!` on
// its row and the warning in its preview.
func TestParkReasonAndLintMark(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := newHarness(t, p, size[0], size[1])
		h.selectPlan("blocked/email-reminders.md")
		v := h.view()
		if !strings.Contains(v, "why parked") || !strings.Contains(v, "needs SMTP credentials") {
			t.Errorf("%dx%d: the parked row does not say why:\n%s", size[0], size[1], v)
		}
		h.press("enter") // the reader: the preview full screen
		if v := h.view(); !strings.Contains(v, "Parked:** needs SMTP credentials") {
			t.Errorf("%dx%d: the preview does not say why it was parked:\n%s", size[0], size[1], v)
		}
		h.press("esc")
		h.selectPlan("drafts/dark-mode.md")
		var row string
		for _, l := range strings.Split(h.view(), "\n") {
			if strings.Contains(l, "dark-mode ") {
				row = l
			}
		}
		if !strings.Contains(row, "▸!") {
			t.Errorf("%dx%d: the linted plan's row has no mark: %q", size[0], size[1], row)
		}
		for _, l := range strings.Split(h.view(), "\n") {
			if strings.Contains(l, "tag-suggest") && strings.Contains(l, "!") {
				t.Errorf("%dx%d: a plan check has nothing to say about is marked: %q", size[0], size[1], l)
			}
		}
		h.press("enter")
		if v := h.view(); !strings.Contains(v, "line 3:** bold key without") {
			t.Errorf("%dx%d: the preview does not carry the warning:\n%s", size[0], size[1], v)
		}
		h.press("esc")
	}
}

// A plan parked with no reason says so, rather than show its deps as if
// nothing were wrong.
func TestParkedWithoutReason(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	if _, err := p.tree.Park("bugs/crash-on-save.md", model.Blocked, planfs.Actor{AgentID: "op"}); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, p, 120, 32)
	h.selectPlan("blocked/crash-on-save.md")
	if v := h.view(); !strings.Contains(v, "parked, no reason given") {
		t.Errorf("no word on the missing reason:\n%s", v)
	}
}

// Status messages fade after statusFade, so the key hints come back; an
// error stays while a question is open.
func TestStatusFades(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := newHarness(t, p, size[0], size[1])
		h.m.holdStatus = false
		hints := h.footer()
		cmd := h.update(uictx.ActionMsg{Done: "promoted tag-suggest → features"})
		if !strings.Contains(h.footer(), "✓ promoted tag-suggest") {
			t.Fatalf("no status: %q", h.footer())
		}
		// The fade is a timer (tea.Tick): its message is made here rather
		// than waited five seconds for.
		if cmd == nil {
			t.Fatalf("%dx%d: no fade timed for the status", size[0], size[1])
		}
		fade := statusFadeMsg{seq: h.m.statusSeq}
		// A newer message is not cleared by the older one's fade.
		h.update(uictx.ActionMsg{Done: "released old-import"})
		h.update(fade)
		if !strings.Contains(h.footer(), "released old-import") {
			t.Errorf("%dx%d: an older fade cleared a newer status: %q", size[0], size[1], h.footer())
		}
		h.update(statusFadeMsg{seq: h.m.statusSeq})
		if f := h.footer(); f != hints {
			t.Errorf("%dx%d: after the fade the footer is %q, want the hints %q", size[0], size[1], f, hints)
		}
		// An error while a question is open stays.

		h.m.stack.push(&dialog{Question: uictx.Question{Title: "Promote", Verb: "promote"}})
		h.m.setStatus("✗ it moved", true)
		h.update(statusFadeMsg{seq: h.m.statusSeq})
		if h.m.status == "" {
			t.Errorf("%dx%d: an error faded while a question was open", size[0], size[1])
		}
		h.m.stack = overlays{}
	}
}

// Under NO_COLOR (the Ascii profile) the selection is reverse video
// written directly, never italic or a colour; the rest of the screen has
// no escape codes.
func TestNoColorSelectionIsReverseVideo(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := newHarness(t, p, size[0], size[1])
		for _, pane := range []string{"1", "2", "5"} {
			h.press(pane)
			v := h.m.View()
			sel := selectedLine(v)
			if !strings.Contains(sel, uictx.ReverseOn+"▸") || !strings.Contains(sel, uictx.ReverseOff) {
				t.Errorf("%dx%d pane %s: the selected row is not reverse video: %q", size[0], size[1], pane, sel)
			}
			if rest := strings.NewReplacer(uictx.ReverseOn, "", uictx.ReverseOff, "").Replace(v); strings.Contains(rest, "\x1b") {
				t.Errorf("%dx%d pane %s: other escape codes under NO_COLOR: %q", size[0], size[1], pane, rest)
			}
		}
	}
}

// In colour the selected row keeps its state colours: an expired lease is
// red under the highlight, a plan's rank green.
func TestSelectedRowKeepsStateColours(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	r := lipgloss.NewRenderer(nil)
	r.SetColorProfile(termenv.TrueColor)
	r.SetHasDarkBackground(true)
	opt := p.options()
	opt.Renderer = r
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := newHarnessWith(t, p, opt, size[0], size[1])
		on := func(st lipgloss.Style) string {
			s, _, _ := strings.Cut(st.Render("x"), "x")
			return s
		}
		bad, good, row := on(h.m.St.Bad), on(h.m.St.Good), h.m.RowOn
		if bad == "" || row == "" {
			t.Fatal("no colour codes in true colour")
		}
		h.press("2") // expired leases sort first, under the cursor
		sel := selectedLine(h.m.View())
		if !strings.Contains(sel, "EXPIRED") || !strings.Contains(sel, bad) || !strings.Contains(sel, row) {
			t.Errorf("%dx%d: the selected expired lease is not red under the highlight: %q", size[0], size[1], sel)
		}
		h.press("1")
		sel = selectedLine(h.m.View())
		if !strings.Contains(sel, "crash-on-save") || !strings.Contains(sel, good) {
			t.Errorf("%dx%d: the selected plan's rank lost its colour: %q", size[0], size[1], sel)
		}
		if strings.Contains(sel, "\x1b[3m") || strings.Contains(sel, ";3m") {
			t.Errorf("%dx%d: italic in the selection: %q", size[0], size[1], sel)
		}
	}
}

// selectedLine is the line of the screen with the table's selected row
// (beside it, on wide screens, the lane list's selected lane).
func selectedLine(v string) string {
	for _, l := range strings.Split(v, "\n") {
		parts := strings.Split(l, "▸ ")
		for _, after := range parts[1:] {
			if !strings.HasPrefix(after, "bugs") {
				return l
			}
		}
	}
	return ""
}

// The reader's footer lists only what works in the reader.
func TestReaderFooterShowsItsKeys(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := newHarness(t, p, size[0], size[1])
		h.press("enter")
		f := h.footer()
		for _, gone := range []string{"park", "promote", "filter", "spawn"} {
			if strings.Contains(f, gone) {
				t.Errorf("%dx%d: the reader's footer offers %q: %q", size[0], size[1], gone, f)
			}
		}
		if !strings.Contains(f, "scroll") || !strings.Contains(f, "close") {
			t.Errorf("%dx%d: the reader's footer lacks its keys: %q", size[0], size[1], f)
		}
	}
}
