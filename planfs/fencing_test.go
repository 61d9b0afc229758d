package planfs

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
)

// A holder that lost its lease to a recover under the same agent id (a
// stopped driver, resumed) can neither renew it nor move the plan: only the
// token of the lease on disk counts.
func TestFencingByTokenNotAgentID(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	clock := time.Now()
	tr.Now = func() time.Time { return clock }
	old, err := tr.ClaimHeld("features/a.md", "w", 10)
	if err != nil {
		t.Fatal(err)
	}
	stale := Actor{AgentID: "w", Token: old.Token}
	if _, err := tr.Renew(old.Rel, stale, 10); err != nil {
		t.Fatalf("the holder renews its own lease: %v", err)
	}
	clock = clock.Add(time.Minute) // the holder was stopped; its lease ran out
	fresh, err := tr.Recover(old.Rel, Agent("w"), 3600)
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Token == old.Token || fresh.Token == "" {
		t.Fatalf("recover kept token %q", fresh.Token)
	}
	if _, err := tr.Renew(old.Rel, stale, 10); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("the stale holder renewed the new lease: %v", err)
	}
	if got := tr.ReadLease(old.Rel); got.ExpiresAt != fresh.ExpiresAt {
		t.Fatalf("the stale renewal shortened the lease to %v (was %v)", got.ExpiresAt, fresh.ExpiresAt)
	}
	for name, verb := range map[string]func() (string, error){
		"complete": func() (string, error) { return tr.Complete(old.Rel, model.ReviewNeeded, stale) },
		"release":  func() (string, error) { return tr.Release(old.Rel, stale) },
		"park":     func() (string, error) { return tr.Park(old.Rel, model.Blocked, stale.Because("")) },
		"return":   func() (string, error) { return tr.Return(old.Rel, "", stale) },
	} {
		if _, err := verb(); !errors.Is(err, ErrNotOwner) {
			t.Errorf("%s by the stale holder: %v, want not the owner", name, err)
		}
	}
	if !tr.exists(old.Rel) {
		t.Fatal("a stale holder moved the plan")
	}
	// The new holder, by token, and a verb without a token, by agent id.
	if _, err := tr.Renew(old.Rel, Actor{AgentID: "w", Token: fresh.Token}, 3600); err != nil {
		t.Fatalf("the new holder: %v", err)
	}
	dst, err := tr.Complete(old.Rel, model.ReviewNeeded, Agent("w"))
	if err != nil || dst != "review-needed/a.md" {
		t.Fatalf("complete without a token by the agent id: %q %v", dst, err)
	}
	ev := tr.LastMoveFrom(old.Rel, 10)
	if ev == nil || ev.Lease != fresh.Token || ev.Forced {
		t.Fatalf("the event should name the lease its holder moved it under: %+v", ev)
	}
}

// anchor's leases have no token: the agent id decides, even for an actor
// that carries one.
func TestFencingAnchorLeaseByAgentID(t *testing.T) {
	tr := mkTree(t, "in-progress/a.md:")
	now := tr.now()
	if err := tr.writeLease("in-progress/a.md", model.Lease{Plan: "in-progress/a.md", AgentID: "py", ClaimedAt: now, ExpiresAt: now + 60, Origin: "features/a.md"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Renew("in-progress/a.md", Actor{AgentID: "other", Token: "abcd"}, 60); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("another agent renewed anchor's lease: %v", err)
	}
	if _, err := tr.Renew("in-progress/a.md", Actor{AgentID: "py", Token: "abcd"}, 60); err != nil {
		t.Fatalf("anchor's agent id: %v", err)
	}
}

// A forced move by someone who is not the holder says so in the event log,
// which is how a driver tells an operator's park --force from its agent's.
func TestForcedMoveIsMarked(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	c, err := tr.ClaimHeld("features/a.md", "w", 60)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Park(c.Rel, model.Blocked, Agent("operator-x").Because("wrong")); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("park without force: %v", err)
	}
	if _, err := tr.Park(c.Rel, model.Blocked, Agent("operator-x").Forced(true).Because("wrong")); err != nil {
		t.Fatal(err)
	}
	ev := tr.LastMoveFrom(c.Rel, 10)
	if ev == nil || !ev.Forced || ev.Lease != "" || ev.AgentID != "operator-x" {
		t.Fatalf("event %+v", ev)
	}
}

// Recover checks where the plan is only once it holds the lease lock: a
// plan that left in-progress while it waited is not reported recovered.
func TestRecoverChecksThePlanUnderTheLock(t *testing.T) {
	tr := mkTree(t, "in-progress/a.md:")
	now := tr.now()
	if err := tr.writeLease("in-progress/a.md", model.Lease{Plan: "in-progress/a.md", AgentID: "gone", ClaimedAt: now - 100, ExpiresAt: now - 10, Origin: "features/a.md"}); err != nil {
		t.Fatal(err)
	}
	unlock, err := tr.lockLeases(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := tr.Recover("in-progress/a.md", Agent("me"), 60)
		done <- err
	}()
	time.Sleep(200 * time.Millisecond) // Recover is waiting for the lock
	// Meanwhile someone holding the lock moves the plan on.
	if err := os.Rename(tr.Abs("in-progress/a.md"), tr.Abs("completed/a.md")); err != nil {
		t.Fatal(err)
	}
	unlock()
	if err := <-done; !errors.Is(err, ErrNotFound) {
		t.Fatalf("recover of a plan that left: %v, want not found", err)
	}
	if l := tr.ReadLease("in-progress/a.md"); l != nil && l.AgentID == "me" {
		t.Fatal("recover wrote a lease for a plan that is gone")
	}
}

// An empty lease may be anchor's claim in flight (it creates the file, then
// writes it): recover leaves it for the 60 s leftover rule, not 5 s.
func TestRecoverLeavesAYoungEmptyLease(t *testing.T) {
	tr := mkTree(t, "in-progress/a.md:")
	p := tr.leasePath("in-progress/a.md")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	young := time.Now().Add(-20 * time.Second)
	os.Chtimes(p, young, young)
	if _, err := tr.Recover("in-progress/a.md", Agent("me"), 60); !errors.Is(err, ErrClaimed) {
		t.Fatalf("recover of a 20 s old empty lease: %v, want it left alone", err)
	}
	old := time.Now().Add(-2 * time.Minute)
	os.Chtimes(p, old, old)
	if l, err := tr.Recover("in-progress/a.md", Agent("me"), 60); err != nil || l.AgentID != "me" {
		t.Fatalf("recover of a 2 min old empty lease: %+v %v", l, err)
	}
}
