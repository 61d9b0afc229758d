package ui

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/fleetwatch/fleetwatch/workers/landing"
)

// The real program on a project whose dev a person moved outside the
// queue: the Merge pane's banner names its key, a asks naming the tip,
// and confirming takes the move as the operator's own through the engine:
// its notices are gone and the banner with them.
func TestMergeAcceptsAMoveOfOnesOwn(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	p.git(t, 0, "branch", "dev")
	left := revOf(t, p.dir, "dev")
	record := `{"branch": "dev", "commit": "` + left + `"}` + "\n"
	if err := os.MkdirAll(filepath.Join(p.dir, "var/fleet/queue"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, "var/fleet/queue/integration.json"), []byte(record), 0o644); err != nil {
		t.Fatal(err)
	}
	p.git(t, 0, "commit", "-q", "--allow-empty", "-m", "settings, by hand")
	p.git(t, 0, "branch", "-f", "dev", "HEAD")
	mine := revOf(t, p.dir, "dev")

	tm := teatest.NewTestModel(t, New(p.options()), teatest.WithInitialTermSize(120, 30))
	waitFor(t, tm, []string{"crash-on-save"})
	tm.Send(keyMsg("6"))
	waitFor(t, tm, []string{"a accepts it as yours", "moved outside the queue"})
	tm.Send(keyMsg("a"))
	waitFor(t, tm, []string{"Accept dev @ " + mine[:7]})
	tm.Send(keyMsg("enter"))
	waitFor(t, tm, []string{"accepted dev @ " + mine[:7] + " as your own move"})
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	if n, err := landing.Notices(p.dir); err != nil || len(n) != 0 {
		t.Errorf("notices after accepting: %v (%v)", n, err)
	}
}

func revOf(t *testing.T, dir, ref string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "rev-parse", ref).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// A viewer's session shows the move but offers no key to accept it.
func TestMergeAcceptIsNoViewersKey(t *testing.T) {
	t.Parallel()
	for _, viewer := range []bool{false, true} {
		p := newProject(t)
		opt := p.options()
		opt.ReadOnly = viewer
		h := newHarnessWith(t, p, opt, 120, 30)
		h.send(mergeMsg{listing: landing.Listing{Integration: "dev", Tip: "2b2b2b2b", MovedTo: "2b2b2b2b",
			Notices: []string{"refs/heads/dev moved outside the queue"}, Items: []landing.Status{}}})
		h.press("6")
		offered := strings.Contains(h.view(), "a accepts it as yours · refs/heads/dev moved outside the queue")
		h.press("a")
		if offered == viewer || h.dialogOpen() == viewer {
			t.Errorf("viewer %v: the banner offers a: %v, a opens a dialog: %v\n%s", viewer, offered, h.dialogOpen(), h.view())
		}
	}
}
