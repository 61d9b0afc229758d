package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// When endpoints.yaml cannot be read, the form's warning began with the
// file's absolute path, so the box cut it before the reason: at 80×24
// the operator read "⚠ /home/…/endpoints.yaml:1…" and never what was
// wrong.
func TestSpawnFormSaysWhatIsWrongWithTheRegistry(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	if err := os.WriteFile(filepath.Join(p.dir, "endpoints.yaml"), []byte("endpoints:\n  - name: [broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := p.options()
	opt.Self = "/usr/local/bin/fleetwatch" // never run: the form is only drawn
	h := newHarnessWith(t, p, opt, 80, 24)
	h.press("4", "s")
	v := h.view() // fails on the temp path
	if !strings.Contains(strings.Join(strings.Fields(v), " "), "endpoints.yaml:1: did not find expected") {
		t.Errorf("the form does not say what is wrong with endpoints.yaml:\n%s", v)
	}
}
