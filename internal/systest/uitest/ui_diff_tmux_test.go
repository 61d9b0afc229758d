package uitest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// TestTmuxDiffOfAWorktree drives the real UI in tmux: an agent's worktree
// (made by `fleetwatch worktree ensure`) has a commit and uncommitted
// edits; d on its plan shows both, apart, and n jumps to the next file.
func TestTmuxDiffOfAWorktree(t *testing.T) {
	t.Parallel()
	needTmux(t)
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "in-progress/export.md", Fields: "Preferred models: mid"})
	r := fwtest.Run(t, dir, "worktree", "ensure", "--agent-id", "mid-1", "--slug", "export", "--project", dir)
	fwtest.Want(t, r, 0)
	wt := filepath.Join(dir, "var", "worktrees", "mid-1")
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(wt, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("export.go", "package export\n\nfunc PDF() {}\n")
	testkit.Git(t, wt, "add", "export.go")
	testkit.Git(t, wt, "commit", "-q", "-m", "export: PDF")
	write("export.go", "package export\n\nfunc PDF() { draw() }\n")
	write("todo.txt", "margins\n")

	tt := startTmux(t, 120, 32, dir, nil, "--root", dir)
	tt.waitShows(tmuxStartWait, `1 plans?`, `\[1 Plans\]`)
	// The cockpit opens on the first lane that holds plans: in-progress.
	tt.waitShows(tmuxWait, laneOpen("in-progress", "1"), `export`)
	tt.keys("d")
	tt.waitShows(tmuxWait, `feature/export vs dev at [0-9a-f]{7}`,
		`Committed on feature/export since dev at [0-9a-f]{7}: 1 file, \+3 −0`,
		`Uncommitted in var/worktrees/mid-1 \(against its HEAD\): 1 file, \+1 −1`,
		`1 line  todo\.txt`, `━━ export\.go  \+3 −0`)
	tt.keys("n", "n")
	screen := tt.waitShows(tmuxWait, `━━ export\.go \(uncommitted\)  \+1 −1`, `\+func PDF\(\) \{ draw\(\) \}`)
	if strings.Contains(screen, "computing") {
		t.Errorf("still computing:\n%s", screen)
	}
	tt.keys("Escape")
	tt.waitShows(tmuxWait, `\[1 Plans\]`)
	tt.keys("q")
	if code := tt.waitExit(); code != 0 {
		t.Fatalf("exit %d; last screen:\n%s", code, tt.screen)
	}
}
