package claims

import (
	"errors"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
)

func plan(lane model.Lane, name string) model.Plan {
	return model.Plan{Rel: string(model.RelOf(lane, name)), Lane: lane, Name: name, Slug: model.SlugOf(name), Header: model.Header{AgentAssignable: true}}
}

func TestOverlayShowsRemoteLeasesAsInProgress(t *testing.T) {
	snap := &model.Snapshot{Plans: []model.Plan{plan(model.Bugs, "a.md"), plan(model.Features, "b.md"), plan(model.Completed, "c.md"), plan(model.Features, "d.md")}}
	now := 1000.0
	leases := []Remote{
		{Lease: model.Lease{AgentID: "mid-1", Host: "gpu", TTL: 900, Backend: "git"}, Slug: "a", Version: "1", SeenFor: 100 * time.Second, Need: 960 * time.Second, Live: true},
		{Lease: model.Lease{AgentID: "mid-2", Host: "lap", TTL: 900, Backend: "git"}, Slug: "b", Version: "2", SeenFor: 970 * time.Second, Need: 960 * time.Second},
		{Lease: model.Lease{AgentID: "mid-3", TTL: 60, Backend: "etcd"}, Slug: "c", Live: true},
	}
	out := Overlay(snap, leases, now)
	if snap.Plans[0].Lane != model.Bugs || len(snap.Leases) != 0 {
		t.Fatal("Overlay changed its input")
	}
	a, b := out.PlanAt("in-progress/a.md"), out.PlanAt("in-progress/b.md")
	if a == nil || b == nil || out.PlanAt("completed/c.md") == nil || out.PlanAt("features/d.md") == nil {
		t.Fatalf("plans %+v", out.Plans)
	}
	la, lb := out.LeaseFor("in-progress/a.md"), out.LeaseFor("in-progress/b.md")
	if la == nil || lb == nil || len(out.Leases) != 2 {
		t.Fatalf("leases %+v", out.Leases)
	}
	if la.Origin != "bugs/a.md" || la.Host != "gpu" || la.Backend != "git" || !la.Active(now) || la.ExpiresAt != now+860 {
		t.Errorf("live lease %+v", la)
	}
	if lb.Active(now) {
		t.Errorf("a lease seen unchanged past TTL+grace is expired: %+v", lb)
	}
	// The rules see them as claimed: nothing but d is picked.
	rows := model.Decide(out, model.Worker{AgentID: "x", Tier: model.Mid}, model.Options{Now: now, NoFitCheck: true})
	picks := model.Picks(rows, nil)
	if len(picks) != 1 || picks[0].Plan.Slug != "d" {
		t.Errorf("picks %d, want only d", len(picks))
	}
}

func TestHeldFrom(t *testing.T) {
	v := &View{Leases: []Remote{{Lease: model.Lease{AgentID: "mid-1", Token: "t1", Origin: "bugs/a.md"}, Slug: "a", Version: "v1"}}}
	h, err := HeldFrom(v, "a", "mid-1", "")
	if err != nil || h.Version != "v1" || h.Rel != "bugs/a.md" {
		t.Fatalf("%+v %v", h, err)
	}
	if _, err := HeldFrom(v, "a", "mid-1", "t0"); !errors.Is(err, ErrNotHolder) {
		t.Errorf("stale token: %v", err)
	}
	if _, err := HeldFrom(v, "a", "mid-2", ""); !errors.Is(err, ErrNotHolder) {
		t.Errorf("another agent: %v", err)
	}
	if _, err := HeldFrom(v, "b", "mid-1", ""); !errors.Is(err, ErrNoLease) {
		t.Errorf("no lease: %v", err)
	}
}

func TestGraceAndOpen(t *testing.T) {
	if Grace(15*time.Minute) != time.Minute || Grace(2*time.Second) != time.Second || Grace(100*time.Second) != 10*time.Second {
		t.Error("grace is a tenth of the TTL, between 1 s and a minute")
	}
	if _, err := Open(Config{Backend: "zookeeper"}); !errors.Is(err, ErrNotBuilt) {
		t.Errorf("unknown backend: %v", err)
	}
	e := &TooEarlyError{Slug: "a", Seen: 3 * time.Minute, Need: 16 * time.Minute}
	if e.Error() != "a: lease seen unchanged for 3m0s of the 16m0s a takeover needs" {
		t.Error(e.Error())
	}
}
