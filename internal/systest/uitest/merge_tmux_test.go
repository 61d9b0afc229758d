package uitest

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// TestTmuxMergePaneLandsAChange drives the real UI in tmux through the
// Merge pane: a finished change on feature/theme is approved (A), queued
// (+) and landed (m, whose dialog names the commit); the detached lander
// moves dev to it and the plan to completed/.
func TestTmuxMergePaneLandsAChange(t *testing.T) {
	t.Parallel()
	needTmux(t)
	dir, tip := themeProject(t, "echo ok")
	tt := startTmux(t, 120, 32, dir, nil, "--root", dir)
	tt.waitShows(tmuxStartWait, `\[1 Plans\]`)
	tt.keys("6")
	tt.waitShows(tmuxWait, `\[6 Merge\]`, `integration dev @ [0-9a-f]{7} · 0 queued · checks: smoke`,
		`theme\s+needs review\s+`+tip[:7]+`\s+↑1 ↓0`)
	tt.keys("A")
	tt.waitShows(tmuxWait, `Approve theme @ `+tip[:7])
	tt.keys("Enter")
	tt.waitShows(tmuxWait, `✓ approved theme at `+tip[:7]+`; \+ queues it`, `theme\s+approved\s+`)
	tt.keys("+")
	tt.waitShows(tmuxWait, `✓ queued theme`, `1 theme`)
	tt.keys("m")
	tt.waitShows(tmuxWait, `Land theme @ `+tip[:7], `Checks: smoke`)
	tt.keys("Enter")
	tt.waitShows(tmuxWait, `landing theme @ `+tip[:7]+` started \(log: var/fleet/logs/land\.log\)`)
	tt.waitOnDisk(dir, []string{"completed/theme.md"}, []string{"review-needed/theme.md"})
	// Fails the test unless the frozen commit is on dev now.
	testkit.Git(t, dir, "merge-base", "--is-ancestor", tip, "dev")
	tt.waitShows(tmuxWait, `✓ landed theme at `+tip[:7])
	tt.keys("q")
	if code := tt.waitExit(); code != 0 {
		t.Fatalf("exit %d; last screen:\n%s", code, tt.screen)
	}
}

// A landing started with m that the lander refuses (its check fails)
// ends on the status line and in a notice, naming the reason: not only in
// land.log. Here m is pressed in the Plans pane, on the plan. The change
// is approved and queued before the UI opens: A and + in the Plans pane
// are TestMergeKeysInPlansActOnTheSelectedPlan's, and pressed here while
// the queue is read again they raced its reading.
func TestTmuxRefusedLandingReachesTheScreen(t *testing.T) {
	t.Parallel()
	needTmux(t)
	dir, tip := themeProject(t, "echo broken; exit 1")
	fwtest.Want(t, fwtest.Run(t, dir, "review", "theme", "--approve"), 0)
	fwtest.Want(t, fwtest.Run(t, dir, "queue", "add", "theme"), 0)
	tt := startTmux(t, 120, 32, dir, nil, "--root", dir)
	tt.waitShows(tmuxStartWait, `\[1 Plans\]`)
	// It opens on review-needed/, the one lane with a plan; m is offered
	// once the queue is read and the plan's candidate heads it.
	tt.waitShows(tmuxWait, `m land head`)
	tt.keys("m")
	tt.waitShows(tmuxWait, `Land theme @ `+tip[:7], `enter land`)
	tt.keys("Enter")
	tt.waitShows(tmuxWait, `✗ landing theme @ `+tip[:7]+` did not land: .*smoke failed`, `⚑ 1`)
	tt.keys("N")
	tt.waitShows(tmuxWait, `landing\s+landing theme @ `+tip[:7]+` did not land`)
	if !fwtest.Exists(dir, "review-needed/theme.md") {
		t.Errorf("a refused landing moved the plan")
	}
	// Alone, and seen to close the notices: an escape and a q together
	// read as alt+q.
	tt.keys("Escape")
	notice := regexp.MustCompile(`landing\s+landing theme @ `)
	tt.waitFor(tmuxWait, "the notices closed", func(screen string) bool { return !notice.MatchString(screen) })
	tt.keys("q")
	if code := tt.waitExit(); code != 0 {
		t.Fatalf("exit %d; last screen:\n%s", code, tt.screen)
	}
}

// themeProject is a project whose review-needed/theme.md has one commit
// on feature/theme, gated by one check, smoke, that runs script; tip is
// the branch's tip.
func themeProject(t *testing.T, script string) (dir, tip string) {
	dir = fwtest.GitProject(t, fwtest.Plan{Rel: "review-needed/theme.md", Fields: "Preferred models: mid"})
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"),
		[]byte("checks:\n  - name: smoke\n    run: [sh, -c, \""+script+"\"]\n    timeout: 1m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Checks gate as committed on the integration branch.
	testkit.Git(t, dir, "add", "fleetwatch.yaml")
	testkit.Git(t, dir, "commit", "-q", "-m", "checks")
	testkit.Git(t, dir, "branch", "dev")
	testkit.Git(t, dir, "checkout", "-q", "-b", "feature/theme")
	if err := os.WriteFile(filepath.Join(dir, "theme.txt"), []byte("dark\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testkit.Git(t, dir, "add", "theme.txt")
	testkit.Git(t, dir, "commit", "-q", "-m", "theme: dark")
	tip = fwtest.GitOut(t, dir, "rev-parse", "HEAD")
	testkit.Git(t, dir, "checkout", "-q", "-")
	return dir, tip
}
