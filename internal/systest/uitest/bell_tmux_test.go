package uitest

// The bell as a terminal sees it: tmux with monitor-bell on sets the
// window's bell flag when the program writes BEL, even in the alternate
// screen. The session is detached, so tmux keeps the flag set.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// bellFlag is tmux's #{window_bell_flag} for the test's window: "1" once
// a bell rang there.
func (tt *tmuxTerm) bellFlag() string {
	tt.t.Helper()
	out, err := tt.tmux("display-message", "-p", "-t", "fw", "#{window_bell_flag}")
	if err != nil {
		tt.t.Fatalf("display-message: %v: %s", err, out)
	}
	return strings.TrimSpace(out)
}

func TestTmuxBellOnReviewNeeded(t *testing.T) {
	t.Parallel()
	needTmux(t)
	for _, noBell := range []bool{false, true} {
		t.Run(fmt.Sprintf("no-bell=%v", noBell), func(t *testing.T) {
			t.Parallel()
			dir := fwtest.NewTree(t, fwtest.Plan{Rel: "in-progress/ship-it.md", Fields: "Priority: P1"}, fwtest.Plan{Rel: "features/later.md"})
			var args []string
			if noBell {
				args = append(args, "--no-bell")
			}
			tt := startTmux(t, 100, 30, dir, nil, args...)
			if out, err := tt.tmux("set-option", "-w", "-t", "fw", "monitor-bell", "on"); err != nil {
				t.Fatalf("monitor-bell: %v: %s", err, out)
			}
			tt.waitShows(tmuxStartWait, `\[1 Plans\]`, `2 plans`)
			// The first look (the board and the workers) is the baseline;
			// give the workers' reading its moment before the change.
			time.Sleep(500 * time.Millisecond)
			if f := tt.bellFlag(); f != "0" {
				t.Fatalf("bell flag %q before anything happened", f)
			}
			fwtest.Want(t, fwtest.Run(t, dir, "complete", "in-progress/ship-it.md", "--to", "review-needed", "--force"), fwtest.ExitOK)
			tt.waitShows(tmuxLiveRefresh, `⚑ 1`)
			if noBell {
				time.Sleep(500 * time.Millisecond)
				if f := tt.bellFlag(); f != "0" {
					t.Fatalf("--no-bell: bell flag %q", f)
				}
			} else {
				deadline := time.Now().Add(tmuxWait)
				for tt.bellFlag() != "1" {
					if time.Now().After(deadline) {
						t.Fatalf("no bell %v after ship-it reached review; screen:\n%s", tmuxWait, tt.capture())
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			tt.keys("N")
			tt.waitShows(tmuxWait, `Notices · 1`, `review\s+ship-it waits for review`)
			// It leads to the Merge pane, which says why this tree (not a
			// git repository) has no candidates.
			tt.keys("Enter")
			tt.waitShows(tmuxWait, `\[6 Merge\]`, `merge queue: `)
			tt.keys("q")
			if code := tt.waitExit(); code != fwtest.ExitOK {
				t.Fatalf("exit %d after q", code)
			}
		})
	}
}
