package claims_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// localProject is project's lease files, with bugs/c.md too.
func localProject(t *testing.T) (*claims.Local, *planfs.Tree) {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "dev")
	project(t, dir)
	if err := os.WriteFile(filepath.Join(dir, ".plans", "bugs", "c.md"), []byte("# c\n\n- **Priority:** P2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tree, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return claims.NewLocal(tree), tree
}

// eventsOf is the tree's event log as "event from→to" lines.
func eventsOf(t *testing.T, tree *planfs.Tree) []string {
	t.Helper()
	evs, err := tree.Events()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Event+" "+e.From+"→"+e.To)
	}
	return out
}

func act(t *testing.T, b *claims.Local, op claims.Op) claims.Result {
	t.Helper()
	op.Holder = claims.Holder{AgentID: "operator"}
	res, err := claims.Act(context.Background(), b, viewOf(t, b), op)
	if err != nil {
		t.Fatalf("%s %s: %v", op.Verb, op.Slug, err)
	}
	return res
}

// The lease files' verbs through Act are planfs's own: a release says
// where the plan went back to, a return with no lane sends a parked plan
// back to the lane it was parked from, and a free ready plan is parked
// without a claim in the event log.
func TestLocalActIsPlanfsVerbs(t *testing.T) {
	b, tree := localProject(t)
	if _, err := b.Claim(context.Background(), viewOf(t, b), "bugs/c.md", claims.Holder{AgentID: "operator"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	res := act(t, b, claims.Op{Verb: model.Release, Slug: "c"})
	if res.Rel != "bugs/c.md" || !res.Freed || res.Dropped == nil {
		t.Errorf("release: %+v, want it back in bugs/c.md, freed, its lease dropped", res)
	}
	before := len(eventsOf(t, tree))
	if res := act(t, b, claims.Op{Verb: model.Park, Slug: "c", To: model.Blocked, Why: "waits"}); res.Rel != "blocked/c.md" || res.Freed {
		t.Errorf("park: %+v", res)
	}
	if got := eventsOf(t, tree)[before:]; len(got) != 1 || got[0] != "park bugs/c.md→blocked/c.md" {
		t.Errorf("a free ready plan's park logged %q, want the park alone", got)
	}
	if res := act(t, b, claims.Op{Verb: model.Return, Slug: "c"}); res.Rel != "bugs/c.md" {
		t.Errorf("return of a plan parked from bugs/: %+v", res)
	}
}

// A ready plan's stale ready-path lease (its claimer died before moving
// it) is recovered by clearing it, as planfs's recover does: no lease is
// taken, and the plan is claimable again.
func TestLocalRecoverClearsAStaleReadyLease(t *testing.T) {
	b, tree := localProject(t)
	stale := `{"plan":"features/a.md","agent_id":"gone","claimed_at":1,"expires_at":2,"host":"elsewhere","token":"old"}`
	if err := os.MkdirAll(filepath.Join(tree.Plans, ".leases"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree.Plans, ".leases", model.LeaseFileName("features/a.md")), []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	res := act(t, b, claims.Op{Verb: model.Recover, Slug: "a", TTL: time.Minute})
	if res.Rel != "features/a.md" || res.Holds != nil || tree.ReadLease("features/a.md") != nil {
		t.Errorf("recover of a stale ready-path lease: %+v, lease %+v", res, tree.ReadLease("features/a.md"))
	}
	if _, err := b.Claim(context.Background(), viewOf(t, b), "features/a.md", claims.Holder{AgentID: "w1"}, time.Minute); err != nil {
		t.Errorf("claim after the recover: %v", err)
	}
}

// Recover of an expired in-progress lease takes it over.
func TestLocalRecoverTakesOver(t *testing.T) {
	b, tree := localProject(t)
	if _, err := b.Claim(context.Background(), viewOf(t, b), "features/a.md", claims.Holder{AgentID: "w1"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	expire(t, tree, "in-progress/a.md")
	res := act(t, b, claims.Op{Verb: model.Recover, Slug: "a", TTL: time.Minute})
	if res.Holds == nil || res.Holds.Lease.AgentID != "operator" || res.Rel != "in-progress/a.md" || res.Dropped == nil {
		t.Errorf("recover of an expired lease: %+v", res)
	}
}

// expire rewrites rel's lease as expired long ago.
func expire(t *testing.T, tree *planfs.Tree, rel string) {
	t.Helper()
	testkit.ExpireLeaseFile(t, filepath.Join(tree.Plans, ".leases", model.LeaseFileName(rel)))
}
