package ui

import (
	"strings"
	"testing"
)

// A worker claims the plan a dialog was opened on, moving it to
// in-progress/: the message that closes the dialog names the worker that
// holds it now, not "no lease" (the plan's old place has none).
func TestStaleDialogNamesTheHolderNow(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 120, 32)
	const rel = "bugs/crash-on-save.md"
	h.selectPlan(rel)
	h.press("a") // park
	if !h.dialogOpen() {
		t.Fatalf("no park dialog:\n%s", h.view())
	}
	if _, err := p.tree.Claim(rel, "mid-9", 3600); err != nil {
		t.Fatal(err)
	}
	h.send(changeMsg{}) // the watcher reports it; the board reloads
	if f := h.footer(); h.dialogOpen() || !strings.Contains(f, "changed while you decided") || !strings.Contains(f, "mid-9") {
		t.Errorf("dialog open %v; footer should name mid-9: %s", h.dialogOpen(), f)
	}
}

// The same when enter comes before the board reloads: the check made when
// the action runs names the holder too.
func TestStaleDialogConfirmedNamesTheHolderNow(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 120, 32)
	const rel = "bugs/crash-on-save.md"
	h.selectPlan(rel)
	h.press("a")
	if !h.dialogOpen() {
		t.Fatalf("no park dialog:\n%s", h.view())
	}
	if _, err := p.tree.Claim(rel, "mid-9", 3600); err != nil {
		t.Fatal(err)
	}
	h.press("enter")
	if f := h.footer(); !strings.Contains(f, "changed while you decided") || !strings.Contains(f, "mid-9") {
		t.Errorf("footer should say the plan changed and name mid-9: %s", f)
	}
	if !p.exists("in-progress/crash-on-save.md") {
		t.Errorf("the park went ahead on mid-9's claim")
	}
}
