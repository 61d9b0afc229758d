package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fleetwatch/planfs"
)

func TestCleanDropsControlCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"plain title":               "plain title",
		"evil\x1b]0;pwned\x07title": "evil?]0;pwned?title",
		"tab\there\nnew":            "tab here new",
		"c1\u009bcsi":               "c1?csi",
		"del\x7f":                   "del?",
		"ünïcödé ✓":                 "ünïcödé ✓",
	} {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
	if got := cleanBlock("a\n\tb\x1b[2J"); got != "a\n\tb?[2J" {
		t.Errorf("cleanBlock kept a control character: %q", got)
	}
}

// A plan whose title and slug carry escape sequences is drawn without them.
func TestEscapeSequencesInPlansNeverReachTheScreen(t *testing.T) {
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
