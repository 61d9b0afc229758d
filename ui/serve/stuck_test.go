package serve_test

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/serve"
)

// A served session notices a stuck plan as the local cockpit does: one
// claimed for longer than the project's stuck_after with no commit on its
// branch.
func TestServedSessionSeesStuckPlans(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "in-progress/slow.md"})
	now := time.Now()
	gitAt(t, dir, now, "init", "-q", "-b", "main")
	gitAt(t, dir, now.Add(-5*time.Hour), "commit", "-q", "--allow-empty", "-m", "init")
	gitAt(t, dir, now.Add(-4*time.Hour), "branch", "feature/slow")
	alice := newKey(t, "", "alice@laptop")
	s := startServer(t, dir, []key{alice}, nil, func(o *serve.Options) { o.StuckAfter = 2 * time.Hour })
	tm := s.openTerm(t, 120, 32, alice)
	tm.waitFor(10*time.Second, 0, "slow")
	// A notice is what becomes true while the session watches.
	fwtest.PutLease(t, dir, "in-progress/slow.md", fwtest.AnchorLease("in-progress/slow.md", "w-slow", 3*3600, 4*3600))
	tm.waitFor(10*time.Second, 0, "⚑ 1")
	n := tm.out.Len()
	tm.send("N")
	tm.waitFor(10*time.Second, n, "no commit from w-slow for 3h")
}

func gitAt(t *testing.T, dir string, when time.Time, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", "-C", dir}, args...)...)
	stamp := when.Format(time.RFC3339)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_COMMITTER_DATE="+stamp, "GIT_AUTHOR_DATE="+stamp)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}
