package look

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
)

// A branch's last commit is the later of its local head and any remote's
// copy (a worker on another machine pushes there).
func TestBranchCommitsTakesTheLaterOfLocalAndRemote(t *testing.T) {
	dir := testkit.Repo(t)
	commitAt := func(when time.Time) string {
		stamp := when.Format(time.RFC3339)
		cmd := exec.Command("git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", "-C", dir,
			"commit", "-q", "--allow-empty", "-m", stamp)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_COMMITTER_DATE="+stamp)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("commit: %v: %s", err, out)
		}
		return testkit.Git(t, dir, "rev-parse", "HEAD")
	}
	old, newer := time.Unix(1_700_000_000, 0), time.Unix(1_700_003_600, 0)
	testkit.Git(t, dir, "checkout", "-q", "-b", "feature/x")
	commitAt(old)
	testkit.Git(t, dir, "checkout", "-q", "-b", "elsewhere")
	tip := commitAt(newer)
	testkit.Git(t, dir, "update-ref", "refs/remotes/origin/feature/x", tip)
	got := BranchCommits(dir)
	if got["feature/x"] != float64(newer.Unix()) || got["elsewhere"] != float64(newer.Unix()) {
		t.Errorf("commits %v", got)
	}
	if BranchCommits(t.TempDir()) != nil {
		t.Error("not a repository: want nil")
	}
}
