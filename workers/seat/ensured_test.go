package seat

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// ensured makes agent's worktree on feature/<slug> in a fresh repository.
func ensured(t *testing.T, agent, slug string) (string, tree.Worktree) {
	t.Helper()
	dir := testkit.Repo(t)
	wt, err := Ensure(dir, agent, slug)
	if err != nil {
		t.Fatal(err)
	}
	return dir, wt
}

// freePorts is a range of n ports nothing listens on now.
func freePorts(t *testing.T, n int) look.PortRange {
	lo := testkit.FreePorts(t, n)
	return look.PortRange{Lo: lo, Hi: lo + n - 1}
}
