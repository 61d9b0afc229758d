package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTmuxSpawnAndFollowItsLog drives the real UI in tmux: s spawns a real
// `fleetwatch work-once` (claim only) detached from the UI, the Workers
// pane shows it and how it exited, and l opens its log, which has the
// spawn's own line and what work-once printed: the plan it claimed.
func TestTmuxSpawnAndFollowItsLog(t *testing.T) {
	t.Parallel()
	needTmux(t)
	dir := newTree(t, plan{rel: "features/export.md", fields: "Preferred models: mid"})
	tt := startTmux(t, 120, 32, dir, nil, "--root", dir)
	tt.waitShows(tmuxStartWait, `1 plans?`, `\[1 Plans\]`)

	tt.keys("s")
	tt.waitShows(tmuxWait, `Spawn a worker`, `‹ mid ›`, `ui-mid-1`)
	tt.keys("Tab", "Tab", "Tab", "Space") // mode: claim only
	tt.waitShows(tmuxWait, `‹ claim only`)
	tt.keys("Enter")
	tt.waitShows(tmuxWait, `✓ spawned ui-mid-1 \(pid \d+, claim only, up to 1 plan\)`)
	tt.waitOnDisk(dir, []string{"in-progress/export.md", ".leases/in-progress__export.md.json"}, []string{"features/export.md", ".leases/features__export.md.json"})
	if l := boardReadLease(t, dir, "in-progress/export.md"); l["agent_id"] != "ui-mid-1" {
		t.Errorf("the spawned worker's lease is %v", l)
	}

	tt.keys("4")
	tt.waitShows(tmuxWait, `\[4 Workers\]`, `▸\s+ui-mid-1\s+mid\s.*exited 0`)
	tt.keys("l")
	screen := tt.waitShows(tmuxWait, `ui-mid-1 · exited 0`, `» starting \S+ work-once --root`, `in-progress/export\.md`)
	if !regexp.MustCompile(`(?m)^\s*│ \S+` + regexp.QuoteMeta(filepath.Join(".plans", "in-progress", "export.md"))).MatchString(screen) {
		t.Errorf("the log pane does not show the claimed plan as work-once printed it:\n%s", screen)
	}
	log, err := os.ReadFile(filepath.Join(dir, "var", "fleet", "logs", "ui-mid-1.log"))
	if err != nil || !strings.Contains(string(log), filepath.Join(dir, ".plans", "in-progress", "export.md")) {
		t.Errorf("the log (%v):\n%s", err, log)
	}
	tt.keys("Escape") // alone: an escape and a q together read as alt+q
	tt.waitShows(tmuxWait, `\[4 Workers\]`, `#\s+agent`)
	tt.keys("q")
	if code := tt.waitExit(); code != 0 {
		t.Fatalf("exit %d; last screen:\n%s", code, tt.screen)
	}
}
