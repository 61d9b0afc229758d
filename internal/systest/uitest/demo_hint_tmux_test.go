package uitest

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestTmuxDemoHint opens `fleetwatch demo` at 80×24: its first screen says
// in one line, whole, how to see the fleet work, until the first key; and
// what it says is true: 4 then s spawns a worker that works a plan, 6 then
// m offers to land the queue's head.
func TestTmuxDemoHint(t *testing.T) {
	t.Parallel()
	needTmux(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the demo's checks run go vet and go test")
	}
	tmp := t.TempDir()
	tt := startTmux(t, 80, 24, tmp, []string{"TMPDIR=" + tmp}, "demo")
	hint := `Try: 4 then s spawns a worker · 6 then m lands a change · \? every key`
	tt.waitShows(tmuxStartWait, `\[1 Plans\]`, `note-html-injection`, hint)

	tt.keys("4")
	tt.waitShows(tmuxWait, `\[4 Workers\]`)
	if strings.Contains(tt.capture(), "Try: 4 then s") {
		t.Fatalf("the hint stayed after the first key:\n%s", tt.screen)
	}
	tt.keys("s")
	tt.waitShows(tmuxWait, `Spawn a worker`)
	tt.keys("Enter")
	tt.waitShows(tmuxWait, `✓ spawned ui-box-mid-1`)
	// The stand-in agent works a plan and hands it to review.
	tt.waitShows(60*time.Second, `ui-box-mid-1\s.*exited 0`)

	tt.keys("6")
	tt.waitShows(tmuxWait, `\[6 Merge\]`, `1 csv-import\s+queued`)
	tt.keys("m")
	tt.waitShows(tmuxWait, `Land csv-import @ [0-9a-f]{7}`)
	// Confirmed, the lander would check the tree it lands for minutes (go
	// vet, go test) after this test; TestTmuxMergePaneLandsAChange lands.
	tt.waitShows(tmuxWait, `enter land`)
	// Alone, and seen to close the dialog: an escape and a q together
	// read as alt+q.
	tt.keys("Escape")
	tt.waitFor(tmuxWait, "the land dialog closed", func(screen string) bool { return !strings.Contains(screen, "enter land") })
	tt.keys("q")
	if code := tt.waitExit(); code != 0 {
		t.Fatalf("demo exited %d after q; last screen:\n%s", code, tt.screen)
	}
}
