package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// viewer opens the sample project as a viewer over SSH would see it: a
// read-only session on a read-only tree, with no editor.
func viewer(t *testing.T, w, h int) *harness {
	t.Helper()
	p := newProject(t)
	p.tree.ReadOnly = true
	opt := p.options()
	opt.ReadOnly, opt.NoEditor = true, true
	opt.Self = "/usr/local/bin/fleetwatch" // spawning would be offered to an operator
	return newHarnessWith(t, p, opt, w, h)
}

// actionHelp is every action key as help shows it ("p promote"), and its
// words alone.
func actionHelp() []string {
	k := DefaultKeyMap()
	var out []string
	for _, group := range keyActions(&k) {
		for _, a := range group {
			h := a.b.Help()
			out = append(out, h.Key+" "+h.Desc)
		}
	}
	return out
}

// A viewer's footer names no action, in any pane, wide or narrow; its ?
// screen lists the pane's actions greyed, each with the reason a viewer
// can't; its header says read-only.
func TestViewerScreenNamesNoAction(t *testing.T) {
	t.Parallel()
	k := DefaultKeyMap()
	all := keyActions(&k)
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		h := viewer(t, size[0], size[1])
		// Selections where each action would apply to an operator.
		h.selectPlan("drafts/dark-mode.md")
		wheres := [][]string{{"1"}, {"1", "]", "]", "]"}, {"2"}, {"3"}, {"4"}, {"5"}, {"6"}, {"7"}}
		if size[0] < 100 {
			// Narrow, the footer is shorter still: the panes with the most keys.
			wheres = [][]string{{"1"}, {"1", "]", "]", "]"}, {"2"}, {"6"}}
		}
		for _, where := range wheres {
			h.press(where...)
			screen := h.view()
			for _, a := range actionHelp() {
				if strings.Contains(screen, a) {
					t.Errorf("%dx%d after %v: a viewer's footer names %q:\n%s", size[0], size[1], where, a, screen)
				}
			}
			if first := strings.SplitN(screen, "\n", 2)[0]; !strings.Contains(first, "read-only") {
				t.Errorf("%dx%d: the header does not say read-only: %q", size[0], size[1], first)
			}
			text := h.helpText()
			for _, a := range append(all[h.m.pane], all[paneCount()]...) {
				hl := a.b.Help()
				if want := hl.Key + " " + hl.Desc + " — read-only: viewers can't " + a.verb; !strings.Contains(text, want) {
					t.Errorf("%dx%d after %v: ? lacks %q:\n%s", size[0], size[1], where, want, text)
				}
			}
		}
	}
}

// Each action key a viewer presses, in every pane, is refused with a
// status line naming what viewers can't do, opens nothing, and changes
// nothing on disk.
func TestViewerActionKeysRefused(t *testing.T) {
	t.Parallel()
	h := viewer(t, 120, 32)
	before := h.p.state(t)
	k := DefaultKeyMap()
	for p := range paneCount() {
		for _, group := range keyActions(&k) {
			for _, a := range group {
				for _, name := range a.b.Keys() {
					h.press(kit.Itoa(int(p) + 1))
					h.selectIn(p)
					h.press(name)
					if len(h.m.stack) > 0 {
						t.Errorf("pane %d: %q opened %T for a viewer", p+1, name, h.m.stack.top())
						h.m.stack = nil
					}
					if !strings.Contains(h.m.status, "read-only: viewers can't") {
						t.Errorf("pane %d: %q (%s) gave status %q, want a read-only refusal", p+1, name, a.verb, h.m.status)
					}
				}
			}
		}
	}
	h.press("1")
	h.selectPlan("drafts/dark-mode.md")
	h.press("p")
	if want := "✗ read-only: viewers can't promote"; !strings.Contains(h.footer(), want) {
		t.Errorf("p on a draft: footer %q, want %q", h.footer(), want)
	}
	if after := h.p.state(t); after != before {
		t.Errorf("a viewer's keys changed the tree:\n%s\n---\n%s", before, after)
	}
}

// selectIn moves the cursor onto a row of pane p, where there is one.
func (h *harness) selectIn(p uictx.PaneID) {
	if p == plansPane {
		h.press("g")
		return
	}
	if h.m.current().Len() > 0 {
		h.press("g")
	}
}

// Without an editor, n and e are off for an operator too: greyed in help
// with the reason, gone from the footer, and refused with a status line;
// the other actions stay.
func TestNoEditorRefusesNewAndEdit(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	opt := p.options()
	opt.NoEditor = true
	h := newHarnessWith(t, p, opt, 160, 48)
	k := DefaultKeyMap()
	for _, b := range []key.Binding{k.Plans.New, k.Plans.Edit} {
		hl := b.Help().Key + " " + b.Help().Desc
		if v := h.view(); strings.Contains(v, hl) {
			t.Errorf("without an editor the footer offers %q", hl)
		}
		if text := h.helpText(); !strings.Contains(text, hl+" — there is no editor in this session (over ssh)") {
			t.Errorf("without an editor ? does not say why %q is off:\n%s", hl, text)
		}
		h.press(b.Keys()[0])
		if len(h.m.stack) > 0 || !strings.Contains(h.m.status, "no editor") {
			t.Errorf("%s without an editor: status %q, overlays %d", b.Help().Desc, h.m.status, len(h.m.stack))
		}
	}
	h.selectPlan("bugs/crash-on-save.md")
	if v := h.helpText(); !strings.Contains(v, "a park") || strings.Contains(v, "a park —") {
		t.Errorf("an operator without an editor lost the other actions:\n%s", v)
	}
}

// StopMsg puts its reason on the status line, closes what the session
// follows and quits at once.
func TestStopMsgQuits(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	cmd := h.update(StopMsg{Reason: "the server is stopping"})
	if cmd == nil {
		t.Fatal("StopMsg gave no command")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("StopMsg did not quit")
	}
	if !strings.Contains(h.footer(), "the server is stopping") {
		t.Errorf("the status line does not say why: %q", h.footer())
	}
}

// Every session opens on the Plans pane and the bugs lane, the first of
// the ready lanes, as the local UI always has: a hub-fed one too.
func TestOpensOnPlansPane(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	if h.m.pane != plansPane || plansOf(&h.m).Lane() != "bugs" {
		t.Errorf("opened on pane %d lane %s, want the plans pane on bugs", h.m.pane, plansOf(&h.m).Lane())
	}
	hub := newHub(t, p)
	s := openSession(t, p, hub)
	waitAll(t, []*session{s}, "bugs/crash-on-save.md", 15*time.Second)
	m := s.close(t)
	if m.pane != plansPane || plansOf(&m).Lane() != "bugs" || plansOf(&m).Len() == 0 {
		t.Errorf("a hub-fed session opened on pane %d lane %s with %d rows", m.pane, plansOf(&m).Lane(), plansOf(&m).Len())
	}
}
