package workers

import (
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/seat"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// ensured makes agent's worktree on feature/<slug> in a fresh repository.
func ensured(t *testing.T, agent, slug string) (string, tree.Worktree) {
	t.Helper()
	dir := testkit.Repo(t)
	wt, err := seat.Ensure(dir, agent, slug)
	if err != nil {
		t.Fatal(err)
	}
	return dir, wt
}

// remove while the agent's driver works in the worktree would pull its
// checkout from under it and give its port to another agent.
func TestRemoveRefusesWhileTheDriverRuns(t *testing.T) {
	dir, wt := ensured(t, "w", "x")
	port, err := look.AssignPort(dir, "w", freeRange(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	d := &Driver{Tree: &planfs.Tree{Project: dir}, Worker: model.Worker{AgentID: "w"}}
	if err := d.lockAgent(); err != nil {
		t.Fatal(err)
	}
	for _, force := range []bool{false, true} {
		_, err := seat.Remove(dir, "w", force, true)
		if err == nil || !strings.Contains(err.Error(), "running") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("force %v: removed under a running driver: %v", force, err)
		}
		if !tree.IsDir(wt.Path) {
			t.Fatal("the worktree is gone")
		}
		if p, ok := look.PortOf(dir, "w"); !ok || p != port {
			t.Fatalf("the running agent's port was freed: %d %v", p, ok)
		}
	}
	// Once the driver has gone, remove works.
	d.lock.Close()
	if got, err := seat.Remove(dir, "w", false, false); err != nil || got.Path != wt.Path || got.Port != port {
		t.Fatalf("after the driver: %+v %v", got, err)
	}
}
