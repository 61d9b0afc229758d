package landtest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// An agent can write the shared git dir's config: none of its hooks,
// fsmonitor or diff drivers runs in the operator's review, queue, check and
// landing (with its checks' throwaway worktrees, the compare-and-swap and
// the sync of a checkout of dev).
func TestQueueRunsNoRepositoryCode(t *testing.T) {
	t.Parallel()
	dir := landProject(t, passCheck)
	tip := feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
	testkit.Git(t, dir, "worktree", "add", "-q", filepath.Join(t.TempDir(), "dev"), "dev")
	ran := testkit.HostileGitConfig(t, dir)

	approve(t, dir, "a")
	if st, why := stateOf(t, dir, "a"); st != "approved" {
		t.Fatalf("approved a is %q (%s)", st, why)
	}
	fwtest.Want(t, fwtest.Run(t, dir, "queue", "add", "a"), 0)
	fwtest.Run(t, dir, "check")
	r := land(t, dir, nil)
	fwtest.Want(t, r, 0)
	if !strings.Contains(r.Stdout+r.Stderr, "landed a") {
		t.Errorf("queue land: %v", r)
	}
	testkit.NothingRan(t, ran, "review, queue add|list|land and check")
	wantLanded(t, dir, "a", tip)
}
