//go:build etcd

package etcdclaims

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// TestActOverEtcd: the operator verbs through etcd: a park of a leased
// plan moves it on git and deletes its key; a park under a lease that
// changed since (claimed again) is refused and moves nothing; a park of a free ready plan
// leaves no key behind, and one decided on a view read before a worker's
// claim is refused.
func TestActOverEtcd(t *testing.T) {
	t.Parallel()
	// Four plans: a root commit, and so a key prefix, of its own.
	clone := clonedProject(t, 4)
	cfg := claims.Config{Backend: "etcd", Project: clone, Endpoints: []string{endpoint}, Timeout: 20 * time.Second}
	be, err := claims.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	b := be.(*Backend)
	ctx := context.Background()
	h, err := b.Claim(ctx, viewOf(t, b), "features/p000.md", claims.Holder{AgentID: "w1"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	stale := viewOf(t, b)
	// The lease changes: released, and claimed again by another worker.
	if err := b.Release(ctx, h, "done"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Claim(ctx, viewOf(t, b), "features/p000.md", claims.Holder{AgentID: "w9"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	op := claims.Op{Verb: model.Park, Slug: "p000", To: model.Blocked, Force: true, Holder: claims.Holder{AgentID: "op"}}
	if _, err := claims.Act(ctx, b, stale, op); !errors.Is(err, claims.ErrLost) {
		t.Fatalf("park under a lease that changed since: %v", err)
	}
	if v := viewOf(t, b); v.Snapshot.PlanAt("blocked/p000.md") != nil || v.Lease("p000") == nil {
		t.Fatal("the refused park moved the plan or dropped its lease")
	}
	res, err := claims.Act(ctx, b, viewOf(t, b), op)
	if err != nil || res.Rel != "blocked/p000.md" || res.Dropped == nil {
		t.Fatalf("park of a leased plan: %+v %v", res, err)
	}
	op.Slug, op.Force = "p001", false
	if res, err := claims.Act(ctx, b, viewOf(t, b), op); err != nil || res.Rel != "blocked/p001.md" {
		t.Fatalf("park of a free plan: %+v %v", res, err)
	}
	v := viewOf(t, b)
	if len(v.Leases) != 0 || v.Snapshot.PlanAt("blocked/p000.md") == nil || v.Snapshot.PlanAt("blocked/p001.md") == nil {
		t.Errorf("after the parks: leases %+v", v.Leases)
	}
	if _, err := b.Claim(ctx, v, "features/p002.md", claims.Holder{AgentID: "w2"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	op.Slug = "p002"
	if _, err := claims.Act(ctx, b, v, op); !errors.Is(err, claims.ErrLost) {
		t.Errorf("park on a view older than the claim: %v", err)
	}
	if r := viewOf(t, b).Lease("p002"); r == nil || r.AgentID != "w2" {
		t.Errorf("the worker's claim after the refused park: %+v", r)
	}
}
