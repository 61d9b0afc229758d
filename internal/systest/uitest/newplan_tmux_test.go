package uitest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/model"
)

// editorScript is the operator's $EDITOR: it checks it was handed the
// plan's template copy (named after the plan), shows it has the terminal
// and waits for a key, then writes the plan body.
const editorScript = `#!/bin/sh
for f; do :; done # the file is the last argument, after the editor's own words
grep -q '^## Done when' "$f" || { echo "NOT A PLAN COPY: $f"; read x; exit 3; }
# Each run says its number, so a wait never matches an earlier run's line.
n=$(($(cat "$0.runs" 2>/dev/null || echo 0) + 1)); echo "$n" > "$0.runs"
printf 'EDITING %s, run %s\n' "$(basename "$f")" "$n"
read answer
cat > "$f" <<'EOF'
# Fresh plan, written in the editor

- **Value:** high
- **Priority:** P1
- **Preferred models:** mid, frontier
- **Depends on:** crash

## Goal

Edited in the editor.

## Done when

- the test sees it
EOF
`

// TestTmuxNewPlanInTheEditor drives n in the real UI with EDITOR set to a
// script: the form, the editor on the terminal while the UI is suspended,
// the plan on disk with the editor's header, then e on it.
func TestTmuxNewPlanInTheEditor(t *testing.T) {
	t.Parallel()
	needTmux(t)
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/crash.md", Fields: "Priority: P1; Preferred models: mid"})
	script := filepath.Join(t.TempDir(), "editor.sh")
	if err := os.WriteFile(script, []byte(editorScript), 0o755); err != nil {
		t.Fatal(err)
	}
	tt := startTmux(t, 80, 24, dir, []string{"EDITOR=" + script, "VISUAL=", "TMPDIR=" + t.TempDir()}, "--root", dir)
	tt.waitShows(tmuxStartWait, laneOpen("bugs", "1"), `▸ ● crash\b`)

	tt.keys("n")
	tt.waitShows(tmuxWait, `New plan`, `▸ slug`, `‹ drafts ›`)
	tt.typeText("crash")
	tt.keys("Tab")
	tt.typeText("Fresh plan")
	tt.keys("Enter")
	tt.waitShows(tmuxWait, `✗ slug crash is taken by bugs/crash\.md`)
	tt.keys("BTab")
	for range len("crash") {
		tt.keys("BSpace")
	}
	tt.typeText("fresh")
	tt.keys("Down", "Down", "Down", "Down", "Down", "Down")
	tt.typeText("cr")
	tt.waitShows(tmuxWait, `▸ depends on cr`, `→ crash`)
	tt.keys("Right")
	tt.waitShows(tmuxWait, `▸ depends on crash`)
	tt.keys("Enter")

	// The UI is suspended: the editor has the terminal.
	tt.waitShows(tmuxWait, `EDITING fresh\.md, run 1`)
	if fwtest.Exists(dir, "drafts/fresh.md") {
		text := fwtest.ReadRel(t, dir, "drafts/fresh.md")
		if h := model.ParseHeader(text); h.Title != "Fresh plan" || strings.Join(h.DependsOn, ",") != "crash" {
			t.Errorf("the plan as created: %+v\n%s", h, text)
		}
	} else {
		t.Error("the plan is not written before the editor opens")
	}
	tt.keys("Enter")
	tt.waitShows(tmuxWait, `✓ created drafts/fresh\.md`, laneOpen("drafts", "1"), `\bfresh\b`)

	h := model.ParseHeader(fwtest.ReadRel(t, dir, "drafts/fresh.md"))
	if h.Title != "Fresh plan, written in the editor" || h.Value != "high" || h.Priority != "P1" ||
		strings.Join(h.Preferred, ",") != "mid,frontier" || strings.Join(h.DependsOn, ",") != "crash" || !h.HasDoneWhen {
		t.Errorf("the plan on disk after the editor: %+v", h)
	}

	// e opens it again; the script writes the same text: unchanged.
	tt.keys("e")
	tt.waitShows(tmuxWait, `EDITING fresh\.md, run 2`)
	tt.keys("Enter")
	tt.waitShows(tmuxWait, `✓ fresh unchanged`)

	tt.keys("q")
	if code := tt.waitExit(); code != 0 {
		t.Fatalf("exit %d; last screen:\n%s", code, tt.screen)
	}
}

// TestTmuxNewOnATerminal: `fleetwatch new` on a terminal opens the editor
// on the plan's copy and writes back what it saved.
func TestTmuxNewOnATerminal(t *testing.T) {
	t.Parallel()
	needTmux(t)
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/crash.md", Fields: "Preferred models: mid"})
	script := filepath.Join(t.TempDir(), "editor.sh")
	if err := os.WriteFile(script, []byte(editorScript), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"EDITOR=", "VISUAL=" + script + " --wait", "TMPDIR=" + t.TempDir()}
	tt := startTmux(t, 80, 24, dir, env, "new", "from-cli", "--root", dir)
	tt.waitShows(tmuxStartWait, `EDITING from-cli\.md, run 1`)
	tt.keys("Enter")
	if code := tt.waitExit(); code != 0 {
		t.Fatalf("exit %d; last screen:\n%s", code, tt.screen)
	}
	h := model.ParseHeader(fwtest.ReadRel(t, dir, "drafts/from-cli.md"))
	if h.Title != "Fresh plan, written in the editor" || h.Priority != "P1" {
		t.Errorf("the plan on disk after the editor: %+v", h)
	}
}
