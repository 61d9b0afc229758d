package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/planfs"
)

// A plan whose title and slug carry escape sequences is drawn without them.
func TestEscapeSequencesInPlansNeverReachTheScreen(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	evil := "# \x1b]0;owned\x07Evil title\x1b[31m\n\n- **Preferred models:** mid\n- **Assignee:** \x1b[5mmallory\n"
	if err := os.WriteFile(filepath.Join(p.dir, planfs.Dir, "bugs", "evil\x1b[2J.md"), []byte(evil), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, p, 160, 48)
	screen := h.view()
	if strings.ContainsAny(screen, "\x1b\x07") {
		t.Fatalf("the screen carries control characters:\n%q", screen)
	}
	if !strings.Contains(screen, "Evil title") {
		t.Fatalf("the evil plan is not listed:\n%s", screen)
	}
}
