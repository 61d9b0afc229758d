package ui

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// A full cap of fleetwatch.yaml's limits: shows on the cockpit's board as
// a problem, in the Events pane with the others, while it is full.
func TestFullCapIsABoardProblem(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	if err := os.WriteFile(filepath.Join(p.dir, "fleetwatch.yaml"), []byte("limits: {fleet: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, p, 140, 32)
	h.press("5")
	if v := h.view(); !regexp.MustCompile(`limits: the fleet has [1-9] of 1 live runs`).MatchString(v) {
		t.Errorf("the Events pane does not show the full cap:\n%s", v)
	}
	if err := os.WriteFile(filepath.Join(p.dir, "fleetwatch.yaml"), []byte("limits: {fleet: 50}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h2 := newHarness(t, p, 140, 32)
	h2.press("5")
	if v := h2.view(); regexp.MustCompile(`limits: `).MatchString(v) {
		t.Errorf("a cap with room shows as a problem:\n%s", v)
	}
}
