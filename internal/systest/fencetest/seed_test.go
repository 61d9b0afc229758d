package fencetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/systest/remotetest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// gitT runs git in dir, failing t on error, and returns its trimmed stdout.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestNewHolderStartsFromTheRemotesBranch: a clone whose local
// feature/<slug> went another way than the remote's (a fenced holder's
// commits there, never pushed) claims the plan: its driver starts from the
// remote's branch, keeps the local commits at a keep ref, and pushes on
// from the remote's; the remote's branch never holds the stale commit.
// Once with the branch not checked out, once checked out in the agent's
// own worktree.
func TestNewHolderStartsFromTheRemotesBranch(t *testing.T) {
	t.Parallel()
	for _, checkedOut := range []bool{false, true} {
		name := "branch"
		if checkedOut {
			name = "own-worktree"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bare, a, b := fleet(t)
			remotetest.NeedBackend(t, a)
			// Another machine pushed the plan's branch.
			gitT(t, b, "checkout", "-q", "-b", "feature/"+slug)
			gitT(t, b, "commit", "-q", "--allow-empty", "-m", "remote 1")
			gitT(t, b, "push", "-q", "origin", branch)
			remote := gitT(t, b, "rev-parse", "HEAD")
			// This clone has the branch from before, gone another way.
			gitT(t, a, "branch", "feature/"+slug, "main")
			stale := gitT(t, a, "commit-tree", "-p", "main", "-m", "stale 1", gitT(t, a, "rev-parse", "main^{tree}"))
			gitT(t, a, "update-ref", branch, stale)
			if checkedOut {
				gitT(t, a, "worktree", "add", "-q", filepath.Join(a, "var", "worktrees", "w"), "feature/"+slug)
			}
			fwtest.Uncontained(t, a)
			fwtest.WithExecutor(t, a, committer(2)...)
			r := fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "w", "--run", "--slug", slug, "--lease-ttl", "10")
			if r.Code != 0 {
				t.Fatalf("--run: %v", r)
			}
			if !strings.Contains(r.Stderr, "kept at refs/fleetwatch/keep/"+slug+"/") {
				t.Errorf("stderr does not say where the local commits are kept:\n%s", r.Stderr)
			}
			kept := gitT(t, a, "for-each-ref", "--format=%(objectname)", "refs/fleetwatch/keep/"+slug+"/")
			if kept != stale {
				t.Errorf("keep ref at %q, want the stale commit %s", kept, stale)
			}
			final := gitT(t, bare, "rev-parse", branch)
			if !isAncestor(bare, remote, final) || subject(bare, final) != "w 2" {
				t.Errorf("the remote's branch ends at %q, not the agent's commits on the remote's %s", subject(bare, final), remote)
			}
			for _, v := range strings.Fields(git(bare, "reflog", "show", "--format=%H", branch)) {
				if v == stale || isAncestor(bare, stale, v) {
					t.Errorf("the remote's branch held the stale local commit (%s)", v)
				}
			}
			if log, _ := os.ReadFile(look.LogPath(a, "w")); strings.Contains(string(log), "push of feature/") {
				t.Errorf("a push was refused:\n%s", tail(string(log)))
			}
		})
	}
}
