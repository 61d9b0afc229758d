package gitclaims

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// remoteTip is the bare remote's dev.
func remoteTip(t *testing.T, bare string) string { return gitIn(t, bare, "rev-parse", "dev") }

// TestMoveHeldIsOneAtomicPush: a move with a lease that changed since
// (renewed) is refused as a whole, the branch untouched; with the lease
// as it is, the plan moves and its lease ref goes in the same push.
func TestMoveHeldIsOneAtomicPush(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare := remoteWith(t, readyPlans(2))
	a, _ := cloneOf(t, bare)
	h, err := a.Claim(ctx, view(t, a), "features/p000.md", claims.Holder{AgentID: "w1"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	renewed, err := a.Renew(ctx, h, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	tip := remoteTip(t, bare)
	if _, err := a.MoveHeld(ctx, h, model.Blocked, "op", "why"); !errors.Is(err, claims.ErrLost) {
		t.Fatalf("a move under a stale lease: %v", err)
	}
	if remoteTip(t, bare) != tip {
		t.Fatal("the refused move moved the branch")
	}
	dst, err := a.MoveHeld(ctx, renewed, model.Blocked, "op", "why")
	if err != nil || dst != "blocked/p000.md" {
		t.Fatalf("move: %q %v", dst, err)
	}
	v := view(t, a)
	if v.Lease("p000") != nil || v.Snapshot.PlanAt("blocked/p000.md") == nil {
		t.Errorf("after the move: lease %+v", v.Lease("p000"))
	}
	if n := gitIn(t, bare, "rev-list", "--count", tip+"..dev"); n != "1" {
		t.Errorf("%s commits for one move", n)
	}
}

// TestActParksAFreePlanUnderItsOwnClaim: a park of a free ready plan leaves
// no lease behind; a park decided on a view read before a worker claimed
// the plan is refused and leaves the worker's claim and the plan alone.
func TestActParksAFreePlanUnderItsOwnClaim(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare := remoteWith(t, readyPlans(2))
	a, _ := cloneOf(t, bare)
	w, _ := cloneOf(t, bare)
	op := claims.Op{Verb: model.Park, Slug: "p000", To: model.Blocked, Why: "wait", Holder: claims.Holder{AgentID: "op"}}
	res, err := claims.Act(ctx, a, view(t, a), op)
	if err != nil || res.Rel != "blocked/p000.md" || res.Dropped != nil {
		t.Fatalf("park of a free plan: %+v %v", res, err)
	}
	if refs, _ := a.Locked(); len(refs) != 0 {
		t.Errorf("locked refs: %v", refs)
	}
	if v := view(t, a); len(v.Leases) != 0 || v.Snapshot.PlanAt("blocked/p000.md") == nil {
		t.Errorf("after the park: leases %+v", v.Leases)
	}
	stale := view(t, a)
	if _, err := w.Claim(ctx, view(t, w), "features/p001.md", claims.Holder{AgentID: "w1"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	op.Slug = "p001"
	if _, err := claims.Act(ctx, a, stale, op); !errors.Is(err, claims.ErrLost) {
		t.Fatalf("park on a view older than the claim: %v", err)
	}
	v := view(t, a)
	if r := v.Lease("p001"); r == nil || r.AgentID != "w1" || v.Snapshot.PlanAt("blocked/p001.md") != nil {
		t.Errorf("the worker's claim after the refused park: %+v", r)
	}
	// Forced, on a fresh view: moved, and the lease dropped with it.
	op.Force = true
	res, err = claims.Act(ctx, a, v, op)
	if err != nil || res.Dropped == nil || res.Dropped.AgentID != "w1" {
		t.Fatalf("forced park: %+v %v", res, err)
	}
	if v := view(t, a); v.Lease("p001") != nil {
		t.Errorf("a parked plan keeps its lease: %+v", v.Lease("p001"))
	}
}

// TestLeaseRefProblemAgreesWithGit: the model's rule says no exactly where
// git check-ref-format does.
func TestLeaseRefProblemAgreesWithGit(t *testing.T) {
	t.Parallel()
	for _, slug := range []string{"a b", "q?x", "tilde~1", "x..y", "a^b", "a:b", "a*b", "a[b", `a\b`, "x.lock", ".x", "x.", "a@{b", "a\x7fb",
		"ok", "-x", "@", "a.b", "UPPER", "x.locks", "a{b}", "a@b", "ünï"} {
		err := exec.Command("git", "check-ref-format", LeaseRefs+slug).Run()
		if gitSays, we := err == nil, model.LeaseRefProblem(slug) == ""; gitSays != we {
			t.Errorf("%q: git takes it %v, LeaseRefProblem %q", slug, gitSays, model.LeaseRefProblem(slug))
		}
	}
}

// TestRewindRefusesReopenedPlans: a read older than the last one seen (a
// slow fetch) is not a rewind; the remote's branch set back before a
// completion is one: the plan it reopened is refused with the reason and a
// warning, until the rewind is accepted.
func TestRewindRefusesReopenedPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare := remoteWith(t, readyPlans(2))
	a, dir := cloneOf(t, bare)
	old := remoteTip(t, bare)
	oldLanes := view(t, a).Snapshot
	h, err := a.Claim(ctx, view(t, a), "features/p000.md", claims.Holder{AgentID: "w1"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Complete(ctx, h, model.Completed); err != nil {
		t.Fatal(err)
	}
	view(t, a) // this machine sees the completion
	if s := a.judged(ctx, old, oldLanes); len(s.Refused) != 0 {
		t.Errorf("a stale read refused %v", s.Refused)
	}
	if rw, _ := a.LastRewind(); rw != nil {
		t.Fatalf("a stale read was taken for a rewind: %+v", rw)
	}
	gitIn(t, bare, "update-ref", "refs/heads/dev", old)
	v := view(t, a)
	why := v.Snapshot.Refused["p000"]
	if !strings.Contains(why, "completed before origin/dev moved back") {
		t.Fatalf("p000 after the rewind: refused %q", why)
	}
	rows := model.Decide(v.Snapshot, model.Worker{AgentID: "w2"}, model.Options{Now: 1e9, NoFitCheck: true})
	if picks := model.Picks(rows, nil); len(picks) != 1 || picks[0].Plan.Slug != "p001" {
		t.Errorf("picks after the rewind: %v", picks)
	}
	warned := false
	for _, w := range v.Snapshot.Warnings {
		warned = warned || w.File == "origin/dev" && strings.Contains(w.Message, "moved back")
	}
	if !warned {
		t.Errorf("no warning: %+v", v.Snapshot.Warnings)
	}
	// Accepted by another process on this machine (check --accept-rewind):
	// this one, which cached its judgement of the tip, sees it.
	other, err := Open(claims.Config{Project: dir, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rw, err := other.AcceptRewind(); err != nil || rw == nil || rw.From == "" {
		t.Fatalf("accept: %+v %v", rw, err)
	}
	if v := view(t, a); len(v.Snapshot.Refused) != 0 {
		t.Errorf("refused after accepting: %v", v.Snapshot.Refused)
	}
}
