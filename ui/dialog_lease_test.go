package ui

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// The release dialog is opened on a plan whose lease has expired; before
// the operator confirms, another worker recovers it and holds a live lease
// (the screen even refreshes and shows it). Enter must not silently take
// the plan from the live worker: the dialog's force was decided when it
// opened, from facts that no longer hold.
func TestReleaseDialogSparesLeaseTakenMeanwhile(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	h := newHarness(t, p, 120, 32)
	const rel = "in-progress/old-import.md" // small-2's lease expired an hour ago
	h.selectPlan(rel)
	h.press("r")
	if v := h.view(); !strings.Contains(v, "expired") {
		t.Fatalf("the dialog should say the lease expired:\n%s", v)
	}
	// Meanwhile a worker recovers the plan: a live lease, an hour left.
	if _, err := p.tree.Recover(rel, planfs.Actor{AgentID: "mid-9"}, 3600); err != nil {
		t.Fatal(err)
	}
	h.send(changeMsg{}) // the watcher reports it; the board reloads
	h.press("enter")
	if !p.exists(rel) {
		t.Errorf("release took %s from mid-9, whose lease was live, although the dialog said the lease had expired; footer: %s", rel, h.footer())
	}
	if l := p.leaseOf(rel); l == nil || l.AgentID != "mid-9" {
		t.Errorf("mid-9's live lease is gone: %+v", l)
	}
}

// The same with a plan nobody held when the park dialog opened: the
// dialog says "no one holds it", a worker then takes it over, and enter
// parks it out from under that worker.
func TestParkDialogSparesLeaseTakenMeanwhile(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	if _, err := p.tree.AddPlanAt(model.InProgress, "stranded.md", plan("Stranded", "high", "P1", "mid", "", "none"), testNow.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, p, 120, 32)
	const rel = "in-progress/stranded.md"
	h.selectPlan(rel)
	h.press("a")
	if v := h.view(); !strings.Contains(v, "No one holds it") {
		t.Fatalf("the dialog should say no one holds it:\n%s", v)
	}
	if _, err := p.tree.Recover(rel, planfs.Actor{AgentID: "mid-9"}, 3600); err != nil {
		t.Fatal(err)
	}
	h.send(changeMsg{})
	h.press("enter")
	if !p.exists(rel) {
		t.Errorf("park took %s from mid-9's live lease after the dialog said no one holds it; footer: %s", rel, h.footer())
	}
}

// r is enabled on an in-progress plan without a lease, and the dialog
// offers to release it, but the engine always refuses ("no lease").
func TestReleaseWithoutLeaseIsDisabledOrWorks(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	if _, err := p.tree.AddPlanAt(model.InProgress, "stranded.md", plan("Stranded", "high", "P1", "mid", "", "none"), testNow.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, p, 120, 32)
	h.selectPlan("in-progress/stranded.md")
	if !h.m.Keys.Plans.Release.Enabled() {
		return // fixed: the key is disabled
	}
	h.press("r")
	if v := h.view(); strings.Contains(v, "It is no one holds it") {
		t.Errorf("the dialog reads %q", "It is no one holds it.")
	}
	h.press("enter")
	if f := h.footer(); strings.Contains(f, "✗") {
		t.Errorf("r was enabled and confirmed, and then failed: %s", f)
	}
}

// A lease whose plan does not exist (a leftover): r and R are enabled and
// their dialogs promise to release or recover, but both fail "not found",
// so the operator can never clear it from the UI.
func TestOrphanLeaseCanBeCleared(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	// A ready-path lease of a claim that died long ago, for a plan since removed.
	if _, err := p.tree.AddPlanAt(model.Bugs, "gone.md", plan("Gone", "high", "P1", "small", "", "none"), testNow.Add(-3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	p.at(2 * time.Hour)
	if _, err := p.tree.Claim("bugs/gone.md", "small-3", 60); err != nil {
		t.Fatal(err)
	}
	p.at(0)
	if err := removeFile(p.tree.Abs("in-progress/gone.md")); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, p, 120, 32)
	h.press("2")
	if !leasesOf(&h.m).GoTo(model.LeaseFileName("in-progress/gone.md")) {
		t.Fatalf("no lease row for the orphan lease:\n%s", h.view())
	}
	h.m.syncKeys()
	for _, k := range []string{"r", "R"} {
		h.press(k)
		if !h.dialogOpen() {
			continue
		}
		h.press("enter")
		if f := h.footer(); strings.Contains(f, "✗") {
			t.Errorf("%s was enabled and confirmed on a lease whose plan is gone, then failed: %s", k, f)
		}
	}
	if p.leaseOf("in-progress/gone.md") != nil {
		t.Errorf("the orphan lease is still there; nothing in the UI clears it")
	}
}

func removeFile(path string) error { return os.Remove(path) }
