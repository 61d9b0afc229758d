package gitclaims

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

var ctx = context.Background()

func TestClaimRenewCompleteRoundTrip(t *testing.T) {
	t.Parallel()
	bare := remoteWith(t, readyPlans(3))
	a, _ := cloneOf(t, bare)
	v := view(t, a)
	if len(v.Snapshot.Plans) != 3 || len(v.Leases) != 0 || v.Tip == "" {
		t.Fatalf("view %+v", v)
	}
	held, err := a.Claim(ctx, v, "features/p000.md", claims.Holder{AgentID: "mid-1"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// Another clone sees it held, as in progress.
	b, _ := cloneOf(t, bare)
	vb := view(t, b)
	if p := vb.Snapshot.PlanAt("in-progress/p000.md"); p == nil {
		t.Fatalf("plans %+v", vb.Snapshot.Plans)
	}
	r := vb.Lease("p000")
	if r == nil || r.AgentID != "mid-1" || !r.Live || r.Token != held.Lease.Token || r.Backend != "git" {
		t.Fatalf("lease %+v", r)
	}
	if _, err := b.Claim(ctx, vb, "features/p000.md", claims.Holder{AgentID: "mid-2"}, time.Minute); !errors.Is(err, claims.ErrLost) {
		t.Fatalf("second claim: %v", err)
	}
	// A claim from a stale view loses at the remote.
	if _, err := b.Claim(ctx, v, "features/p000.md", claims.Holder{AgentID: "mid-2"}, time.Minute); !errors.Is(err, claims.ErrLost) {
		t.Fatalf("claim from a stale view: %v", err)
	}
	renewed, err := a.Renew(ctx, held, time.Minute)
	if err != nil || renewed.Version == held.Version || renewed.Lease.Epoch != 2 {
		t.Fatalf("renew: %+v %v", renewed, err)
	}
	if _, err := a.Renew(ctx, held, time.Minute); !errors.Is(err, claims.ErrLost) {
		t.Fatalf("renewing an old version: %v", err)
	}
	dst, err := a.Complete(ctx, renewed, model.ReviewNeeded)
	if err != nil || dst != "review-needed/p000.md" {
		t.Fatalf("complete: %q %v", dst, err)
	}
	vb = view(t, b)
	if vb.Snapshot.PlanAt("review-needed/p000.md") == nil || vb.Lease("p000") != nil {
		t.Fatalf("after complete: %+v %+v", vb.Snapshot.Plans, vb.Leases)
	}
}

// A glance sees leases made since, and a plan moved on the integration
// branch by another clone (it reads the branch again); a backend new to a
// clone whose fetched branch is the remote's reads its lanes locally.
func TestGlanceSeesNewLeasesAndMovedPlans(t *testing.T) {
	t.Parallel()
	bare := remoteWith(t, readyPlans(3))
	a, dir := cloneOf(t, bare)
	b, _ := cloneOf(t, bare)
	view(t, a)
	held, err := b.Claim(ctx, view(t, b), "features/p000.md", claims.Holder{AgentID: "mid-2"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	g, err := a.Glance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g.Lease("p000") == nil || g.Snapshot.PlanAt("in-progress/p000.md") == nil {
		t.Fatalf("a glance missed the new lease: %+v", g.Leases)
	}
	if _, err := a.Claim(ctx, g, "features/p000.md", claims.Holder{AgentID: "mid-1"}, time.Minute); !errors.Is(err, claims.ErrLost) {
		t.Fatalf("claim of a glanced lease: %v", err)
	}
	if _, err := b.Complete(ctx, held, model.ReviewNeeded); err != nil {
		t.Fatal(err)
	}
	g, err = a.Glance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g.Snapshot.PlanAt("review-needed/p000.md") == nil || g.Snapshot.PlanAt("features/p000.md") != nil {
		t.Fatalf("a glance after the move: %+v", g.Snapshot.Plans)
	}
	fresh, err := Open(claims.Config{Project: dir, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	g, err = fresh.Glance(ctx)
	if err != nil || g.Tip == "" || len(g.Snapshot.Plans) != 3 || g.Snapshot.PlanAt("review-needed/p000.md") == nil {
		t.Fatalf("a new backend's glance: %+v %v", g, err)
	}
}

// A move records who made it and why in its commit on the integration
// branch, where every machine reads it.
func TestMovePlanRecordsTheReason(t *testing.T) {
	t.Parallel()
	bare := remoteWith(t, readyPlans(2))
	a, _ := cloneOf(t, bare)
	dst, err := a.MovePlan(ctx, "features/p001.md", model.Blocked, "operator", "waits on the vendor's API key")
	if err != nil || dst != "blocked/p001.md" {
		t.Fatalf("move: %q %v", dst, err)
	}
	msg := gitIn(t, bare, "log", "-1", "--format=%B", "dev")
	if !strings.Contains(msg, "p001 to blocked (operator)") || !strings.Contains(msg, "waits on the vendor's API key") {
		t.Errorf("the move's commit says %q", msg)
	}
	if v := view(t, a); v.Snapshot.PlanAt("blocked/p001.md") == nil {
		t.Errorf("plans after the move: %+v", v.Snapshot.Plans)
	}
}
