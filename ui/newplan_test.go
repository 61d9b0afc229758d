package ui

import (
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/cursor"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/model"
)

// drive runs cmd as the program would and feeds back the new-plan and
// editor messages (which the shared harness does not know), handing the
// rest to settle. The editor itself is not run: tea.ExecProcess needs the
// program; editorRan gets the msg that would start it.
func (h *harness) drive(cmd tea.Cmd) (editor *editReadyMsg) {
	h.t.Helper()
	if cmd == nil {
		return nil
	}
	msg := cmd()
	switch msg := msg.(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			if e := h.drive(c); e != nil {
				editor = e
			}
		}
		return editor
	case newPlanOfferMsg, editedMsg:
		next := h.update(msg)
		if f, ok := find[*newPlanForm](h.m.stack); ok {
			for _, in := range f.inputs {
				if in != nil {
					in.Cursor.SetMode(cursor.CursorStatic)
				}
			}
		}
		return h.drive(next)
	case editReadyMsg:
		next := h.update(msg)
		if msg.err == nil && msg.noEditor == nil {
			return &msg // next is tea.ExecProcess's
		}
		return h.drive(next)
	case nil:
		return nil
	}
	h.settle(func() tea.Msg { return msg })
	return nil
}

// key sends one key through drive.
func (h *harness) key(k string) *editReadyMsg {
	h.t.Helper()
	return h.drive(h.update(keyMsg(k)))
}

func (h *harness) typeIn(s string) {
	h.t.Helper()
	for _, r := range s {
		h.drive(h.update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}}))
	}
}

func (h *harness) newPlanForm() *newPlanForm {
	h.t.Helper()
	f, ok := find[*newPlanForm](h.m.stack)
	if !ok {
		h.t.Fatalf("no new-plan form on screen:\n%s", h.m.View())
	}
	return f
}

func noEditor(t *testing.T) {
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", "")
}

func TestNewPlanFormFits(t *testing.T) {
	noEditor(t)
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		p := newProject(t)
		h := newHarness(t, p, size[0], size[1])
		h.press("1")
		h.key("n")
		f := h.newPlanForm()
		h.typeIn("new-x")
		h.key("tab")
		h.typeIn("A plan with a title long enough to be cut somewhere on a narrow screen")
		for f.focus != npDepends {
			h.key("tab")
		}
		h.typeIn("ghost, new-x, fla")
		v := h.view() // fits the terminal, no escape codes
		flat := strings.Join(strings.Fields(v), " ")
		for _, want := range []string{"New plan", "slug", "title", "‹ drafts ›", "‹ medium ›", "‹ P2 ›", "depends on",
			"no plan is called ghost", "new-x would make a cycle", "→ flaky-ci", "esc cancel"} {
			if !strings.Contains(flat, want) {
				t.Errorf("%dx%d: the form does not show %q:\n%s", size[0], size[1], want, v)
			}
		}
		h.key("right") // completes the slug being typed
		if got := f.inputs[npDepends].Value(); got != "ghost, new-x, flaky-ci" {
			t.Errorf("→ completed to %q", got)
		}
	}
}

// Bad input gets one line in the form and writes nothing.
func TestNewPlanFormRefusesBadInput(t *testing.T) {
	noEditor(t)
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	events, _ := p.tree.Events()
	h.press("1")
	h.key("n")
	f := h.newPlanForm()
	steps := []struct {
		slug, title, says string
	}{
		{"", "", "no slug"},
		{"a/b", "T", "not a path"},
		{"crash-on-save", "T", "taken by bugs/crash-on-save.md"},
		{"SAVE-NOTES", "T", "taken by completed/save-notes.md"},
		{"fresh", "", "empty title"},
	}
	for _, s := range steps {
		f.inputs[npSlug].SetValue(s.slug)
		f.inputs[npTitle].SetValue(s.title)
		h.key("enter")
		if !strings.Contains(f.err, s.says) {
			t.Errorf("slug %q title %q: the form says %q, want %q", s.slug, s.title, f.err, s.says)
		}
		if !strings.Contains(h.view(), "✗") {
			t.Errorf("the refusal is not on screen:\n%s", h.view())
		}
	}
	// A ready lane without Preferred models: the engine refuses, the form says so.
	f.inputs[npSlug].SetValue("fresh")
	f.inputs[npTitle].SetValue("Fresh")
	for f.focus != npLane {
		h.key("tab")
	}
	h.key("right")
	h.key("enter")
	if !strings.Contains(f.err, "Preferred models") || f.busy {
		t.Errorf("bugs without models: the form says %q (busy %v)", f.err, f.busy)
	}
	if after, _ := p.tree.Events(); len(after) != len(events) {
		t.Errorf("a refusal logged an event: %v", after[len(events):])
	}
	for _, l := range model.Lanes {
		for _, slug := range []string{"a", "b", "fresh"} {
			if p.exists(string(l) + "/" + slug + ".md") {
				t.Errorf("%s/%s.md was written", l, slug)
			}
		}
	}
	h.key("esc")
	if _, open := find[*newPlanForm](h.m.stack); open {
		t.Error("esc did not close the form")
	}
}

// Without an editor, n still writes the plan and says why it did not open.
func TestNewPlanWithoutAnEditor(t *testing.T) {
	noEditor(t)
	p := newProject(t)
	h := newHarness(t, p, 160, 48)
	h.press("1")
	h.key("n")
	h.typeIn("fresh-idea")
	h.key("tab")
	h.typeIn("A fresh idea")
	h.key("tab") // lane
	h.key("tab") // value
	h.key("left")
	h.key("tab")
	h.key("tab")
	h.typeIn("mid, front")
	h.key("right")
	if e := h.key("enter"); e != nil {
		t.Fatal("an editor was started with none configured")
	}
	if _, open := find[*newPlanForm](h.m.stack); open {
		t.Fatalf("the form is still open: %s", h.newPlanForm().err)
	}
	if !strings.Contains(h.m.status, "created drafts/fresh-idea.md") || !strings.Contains(h.m.status, "$EDITOR") {
		t.Errorf("status %q", h.m.status)
	}
	text, err := os.ReadFile(p.tree.Abs("drafts/fresh-idea.md"))
	if err != nil {
		t.Fatal(err)
	}
	hd := model.ParseHeader(string(text))
	if hd.Title != "A fresh idea" || hd.Value != "high" || hd.Priority != "P2" || strings.Join(hd.Preferred, ",") != "mid,frontier" {
		t.Errorf("header %+v from\n%s", hd, text)
	}
	if plansOf(&h.m).Lane() != model.Drafts || h.selected() != "drafts/fresh-idea.md" {
		t.Errorf("the new plan is not selected in drafts (%s):\n%s", h.selected(), h.view())
	}
}

// With an editor, the plan is created, the editor is handed a copy named
// after it, and what the editor saved is written back.
func TestNewPlanEditsTheCopy(t *testing.T) {
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", "my-editor --wait")
	p := newProject(t)
	h := newHarness(t, p, 80, 24)
	h.press("1")
	h.key("n")
	h.typeIn("edited-plan")
	h.key("tab")
	h.typeIn("Edited plan")
	e := h.key("enter")
	if e == nil {
		t.Fatalf("the editor was not started; status %q", h.m.status)
	}
	if strings.Join(e.words, " ") != "my-editor --wait" || !strings.HasSuffix(e.copy.Path, "/edited-plan.md") {
		t.Errorf("editor %q on %s", e.words, e.copy.Path)
	}
	if !strings.Contains(h.m.status, "editing edited-plan in my-editor") {
		t.Errorf("status while editing %q", h.m.status)
	}
	body := "# Edited plan\n\n- **Priority:** P1\n- **Preferred models:** mid\n\n## Done when\n- it is\n"
	if err := os.WriteFile(e.copy.Path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	h.drive(func() tea.Msg { return editedMsg{ready: *e} })
	if got, _ := os.ReadFile(p.tree.Abs("drafts/edited-plan.md")); string(got) != body {
		t.Errorf("the plan holds %q", got)
	}
	if !strings.Contains(h.m.status, "created drafts/edited-plan.md") || h.m.statusErr {
		t.Errorf("status %q", h.m.status)
	}
	// The editor failing leaves the plan and says where the copy is.
	h.selectPlan("drafts/edited-plan.md")
	e = h.key("e")
	if e == nil {
		t.Fatalf("e did not start the editor: %q", h.m.status)
	}
	h.drive(func() tea.Msg { return editedMsg{ready: *e, err: os.ErrPermission} })
	if !h.m.statusErr || !strings.Contains(h.m.status, e.copy.Path) {
		t.Errorf("status after a failed editor %q", h.m.status)
	}
	e.copy.Discard()
}

// e on a plan another agent holds asks first; on a free one it opens.
func TestEditAsksWhenHeld(t *testing.T) {
	noEditor(t)
	p := newProject(t)
	h := newHarness(t, p, 160, 48)
	h.selectPlan("in-progress/export-pdf.md") // mid-1 holds it, live
	h.key("e")
	d := h.m.dialogShown()
	if d == nil || !strings.Contains(d.Title, "mid-1") {
		t.Fatalf("no question before editing a held plan:\n%s", h.view())
	}
	if !strings.Contains(h.view(), "written back only if") {
		t.Errorf("the question does not say what happens:\n%s", h.view())
	}
	h.drive(h.update(keyMsg("enter")))
	if !h.m.statusErr || !strings.Contains(h.m.status, "no editor") {
		t.Errorf("with no editor, e says so: %q", h.m.status)
	}
	h.selectPlan("bugs/crash-on-save.md")
	h.key("e")
	if h.m.dialogShown() != nil {
		t.Error("a free plan asked before editing")
	}
	if !strings.Contains(h.footer(), "no editor: set $VISUAL or $EDITOR") {
		t.Errorf("footer %q", h.footer())
	}
	h.press("2")
	h.key("e")
	if !strings.Contains(h.footer(), "edit") {
		t.Errorf("e off the plans pane: footer %q", h.footer())
	}
}
