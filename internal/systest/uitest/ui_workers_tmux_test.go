package uitest

import (
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// TestTmuxSpawnAndFollowItsLog drives the real UI in tmux: s spawns a real
// `fleetwatch work-once --run` detached from the UI, whose executor (the
// fake agent) prints lines slowly; l opens its log while it works, and the
// pane follows the agent's lines as they come, then its exit.
func TestTmuxSpawnAndFollowItsLog(t *testing.T) {
	t.Parallel()
	needTmux(t)
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/export.md", Fields: "Preferred models: mid"})
	fwtest.WithExecutor(t, dir, fwtest.FakeAgent(t), "-lines", "4", "-every", "700ms")
	tt := startTmux(t, 120, 32, dir, nil, "--root", dir)
	tt.waitShows(tmuxStartWait, `1 plans?`, `\[1 Plans\]`)

	tt.keys("s")
	tt.waitShows(tmuxWait, `Spawn a worker`, `‹ local ›`, `ui-local-1`, `‹ run: claim, then the executor works the plan`)
	tt.keys("Enter")
	tt.waitShows(tmuxWait, `✓ spawned ui-local-1 \(pid \d+, run, up to 1 plan\)`)
	tt.keys("4")
	tt.waitShows(tmuxWait, `\[4 Workers\]`, `▸\s+ui-local-1\s+local mid/fake-1\s.*export`)
	tt.keys("l")
	// The agent's lines arrive while the pane is open: following, not a
	// snapshot taken when it opened.
	first := tt.waitShows(tmuxWait, `ui-local-1 · `, `» claimed in-progress/export\.md`, `  line 1`)
	if strings.Contains(first, "line 4") {
		t.Logf("the agent finished before its log opened; following is not shown:\n%s", first)
	}
	tt.waitShows(tmuxWait, `  line 4`, `» agent exited 0; review-needed/export\.md waits for review`, `ui-local-1 · exited 0`)
	tt.waitOnDisk(dir, []string{"review-needed/export.md"}, []string{"in-progress/export.md", ".leases/in-progress__export.md.json"})
	tt.keys("Escape") // alone: an escape and a q together read as alt+q
	tt.waitShows(tmuxWait, `\[4 Workers\]`, `#\s+agent`)
	tt.keys("q")
	if code := tt.waitExit(); code != 0 {
		t.Fatalf("exit %d; last screen:\n%s", code, tt.screen)
	}
}
