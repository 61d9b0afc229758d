package planfs

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/model"
)

// A claimer killed between creating its ready-path lease and writing it
// leaves an empty file; once past the grace, the next run removes it.
func TestRepairRemovesEmptyReadyLease(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	os.MkdirAll(tr.Abs(".leases"), 0o755)
	os.WriteFile(tr.leasePath("features/a.md"), nil, 0o644)
	if got := tr.Repair(scan(t, tr)); len(got.Fixed) != 0 {
		t.Fatalf("a fresh empty lease may be one being written: %v", got)
	}
	old := time.Now().Add(-2 * time.Minute)
	os.Chtimes(tr.leasePath("features/a.md"), old, old)
	if got := tr.Repair(scan(t, tr)); len(got.Fixed) != 1 || tr.ReadLease("features/a.md") != nil {
		t.Fatalf("old empty lease kept: %v", got)
	}
	if _, err := tr.Claim("features/a.md", "w", 60); err != nil {
		t.Fatal(err)
	}
}

// A link+unlink move cut short leaves one file in two lanes.
func TestRepairFinishesLinkedMove(t *testing.T) {
	tr := mkTree(t, "features/a.md: - **Value:** high")
	if err := os.Link(tr.Abs("features/a.md"), tr.Abs("in-progress/a.md")); err != nil {
		t.Fatal(err)
	}
	// A young double link may be a move still running: left alone.
	if got := tr.Repair(scan(t, tr)); len(got.Fixed) != 0 || !tr.exists("features/a.md") {
		t.Fatalf("a fresh link was undone: %+v", got)
	}
	later := time.Now().Add(2 * time.Minute)
	tr.Now = func() time.Time { return later }
	got := tr.Repair(scan(t, tr))
	if len(got.Fixed) != 1 || tr.exists("features/a.md") || !strings.Contains(mustRead(t, tr.Abs("in-progress/a.md")), "high") {
		t.Fatalf("repair: %+v", got)
	}
	// Two different files of one name are a duplicate for check, not a twin.
	tr = mkTree(t, "features/b.md:", "in-progress/b.md:")
	if got := tr.Repair(scan(t, tr)); len(got.Fixed) != 0 || !tr.exists("features/b.md") {
		t.Fatalf("distinct files touched: %+v", got)
	}
}

// Claiming features/x.md also holds bugs/x.md's lease while it moves, so an
// anchor worker cannot overwrite in-progress/x.md with its twin.
func TestClaimHoldsTwinLease(t *testing.T) {
	tr := mkTree(t, "bugs/x.md:", "features/x.md:")
	busy := tr.newLease("bugs/x.md", "anchor-1", "", "", 60)
	busy.Host, busy.PID = "", 0
	if err := tr.createLeaseExcl("bugs/x.md", busy); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Claim("features/x.md", "w", 60); !errors.Is(err, ErrClaimed) {
		t.Fatalf("claim while the twin is being claimed: %v", err)
	}
	if tr.ReadLease("features/x.md") != nil {
		t.Fatal("failed claim kept its lease")
	}
	os.Remove(tr.leasePath("bugs/x.md"))
	if _, err := tr.Claim("features/x.md", "w", 60); err != nil {
		t.Fatal(err)
	}
	if tr.ReadLease("bugs/x.md") != nil || tr.ReadLease("features/x.md") != nil {
		t.Fatal("ready-path leases left after the claim")
	}
}

func TestRecoverWaitsForClaimInFlight(t *testing.T) {
	tr := mkTree(t, "in-progress/a.md:")
	// Our claimer holds the ready-path lease until the in-progress one is written.
	l := tr.newLease("features/a.md", "claimer", "", "tok", 60)
	tr.createLeaseExcl("features/a.md", l)
	if _, err := tr.Recover("in-progress/a.md", Actor{AgentID: "op"}, 60); !errors.Is(err, ErrClaimed) {
		t.Fatalf("recover during a claim: %v", err)
	}
	if _, err := tr.Park("in-progress/a.md", model.Blocked, Actor{AgentID: "op"}.Because("")); !errors.Is(err, ErrClaimed) {
		t.Fatalf("park during a claim: %v", err)
	}
	os.Remove(tr.leasePath("features/a.md"))
	if _, err := tr.Recover("in-progress/a.md", Actor{AgentID: "op"}, 60); err != nil {
		t.Fatalf("recover after the claim: %v", err)
	}
}

func TestRecoverWaitsForLeaseBeingWritten(t *testing.T) {
	tr := mkTree(t, "in-progress/a.md:")
	os.MkdirAll(tr.Abs(".leases"), 0o755)
	os.WriteFile(tr.leasePath("in-progress/a.md"), []byte(`{"plan": "in-pro`), 0o644)
	if _, err := tr.Recover("in-progress/a.md", Actor{AgentID: "op"}, 60); !errors.Is(err, ErrClaimed) {
		t.Fatalf("recover of a lease being written: %v", err)
	}
	old := time.Now().Add(-time.Minute)
	os.Chtimes(tr.leasePath("in-progress/a.md"), old, old)
	if l, err := tr.Recover("in-progress/a.md", Actor{AgentID: "op"}, 60); err != nil || l.AgentID != "op" {
		t.Fatalf("recover of an old corrupt lease: %+v %v", l, err)
	}
}

func TestBadTTLRefused(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	for _, ttl := range []float64{math.NaN(), math.Inf(1), 0, -5} {
		if _, err := tr.Claim("features/a.md", "w", ttl); err == nil || !strings.Contains(err.Error(), "TTL") {
			t.Errorf("ttl %v: %v", ttl, err)
		}
	}
	if tr.ReadLease("features/a.md") != nil || !tr.exists("features/a.md") {
		t.Fatal("a refused claim changed the tree")
	}
}

// A heartbeat after the lease was recovered by someone else fails: the
// heartbeat and recover are serialised and each checks under the lock.
func TestHeartbeatAfterRecoverFails(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	ip, _ := tr.Claim("features/a.md", "slow", 60)
	later := time.Now().Add(2 * time.Minute)
	tr.Now = func() time.Time { return later }
	if _, err := tr.Recover(ip, Actor{AgentID: "op"}, 60); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Renew(ip, Actor{AgentID: "slow"}, 60); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("late heartbeat: %v", err)
	}
}

func TestSymlinkedLaneRefused(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	outside := t.TempDir()
	os.Remove(tr.Abs("in-progress/.gitkeep"))
	if err := os.Remove(tr.Abs("in-progress")); err != nil {
		t.Fatal(err)
	}
	os.Symlink(outside, tr.Abs("in-progress"))
	if !warned(scan(t, tr), "in-progress/", "symlink") {
		t.Fatal("no warning for a symlinked lane")
	}
	if _, err := tr.Claim("features/a.md", "w", 60); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("claim through a symlinked lane: %v", err)
	}
	if !tr.exists("features/a.md") || tr.ReadLease("features/a.md") != nil {
		t.Fatal("the refused claim changed the tree")
	}
}

// A claimer in another pid namespace (a container sharing the hostname)
// cannot be judged dead by its pid: its half claim is left alone within the
// grace, and later finished for it, never undone.
func TestRepairTrustsPIDsOnlyInItsScope(t *testing.T) {
	tr := mkTree(t, "in-progress/a.md:")
	l := tr.newLease("features/a.md", "boxed", "", "tok", 600)
	l.PID, l.PIDScope = testkit.DeadPID(t), "another-boot/pid:[1]"
	tr.createLeaseExcl("features/a.md", l)
	if got := tr.Repair(scan(t, tr)); len(got.Fixed) != 0 || !tr.exists("in-progress/a.md") {
		t.Fatalf("live foreign claim disturbed: %+v", got)
	}
	later := time.Now().Add(2 * time.Minute)
	tr.Now = func() time.Time { return later }
	got := tr.Repair(scan(t, tr))
	if held := tr.ReadLease("in-progress/a.md"); len(got.Fixed) != 1 || held == nil || held.AgentID != "boxed" || !tr.exists("in-progress/a.md") {
		t.Fatalf("claim not finished for its claimer: %+v %+v", got, held)
	}
	// The same lease in our own scope is proof of death: the claim is undone.
	tr = mkTree(t, "in-progress/b.md:")
	l = tr.newLease("features/b.md", "local", "", "tok", 600)
	l.PID = testkit.DeadPID(t)
	tr.createLeaseExcl("features/b.md", l)
	if got := tr.Repair(scan(t, tr)); len(got.Fixed) != 1 || !tr.exists("features/b.md") {
		t.Fatalf("dead local claim not undone: %+v", got)
	}
}

// A corrupt lease on a twin still in its lane is not a claim in flight.
func TestTwinLeaseDoesNotBlockRecover(t *testing.T) {
	tr := mkTree(t, "bugs/x.md:", "in-progress/x.md:")
	os.MkdirAll(tr.Abs(".leases"), 0o755)
	os.WriteFile(tr.leasePath("bugs/x.md"), []byte("{trunc"), 0o644)
	if _, err := tr.Recover("in-progress/x.md", Actor{AgentID: "op"}, 60); err != nil {
		t.Fatalf("recover blocked by a twin's lease: %v", err)
	}
}

// A lease that changed since it was judged is put back, never dropped.
func TestTakeLeasePutsBack(t *testing.T) {
	tr := mkTree(t, "features/a.md:", "in-progress/b.md:")
	judged := model.Lease{AgentID: "someone-else"}
	for _, rel := range []string{"features/a.md", "in-progress/b.md"} {
		l := tr.newLease(rel, "owner", "", "tok", 60)
		if err := tr.createLeaseExcl(rel, l); err != nil {
			t.Fatal(err)
		}
		if tr.takeLease(rel, func(got *model.Lease) bool { return sameHolder(got, &judged) }) {
			t.Fatalf("%s: took a lease that did not match", rel)
		}
		if got := tr.ReadLease(rel); got == nil || got.AgentID != "owner" {
			t.Errorf("%s: lease not put back: %+v", rel, got)
		}
	}
}

// A claim that wrote its in-progress lease is made, even if its ready-path
// lease is still (or again) there and its claimer is gone: Repair drops that
// lease and never undoes the claim, and nothing waits on it as "in flight".
func TestFinishedClaimIsNeverUndone(t *testing.T) {
	tr := mkTree(t, "in-progress/a.md:")
	ready := tr.newLease("features/a.md", "done", "", "tok", 600)
	ready.PID = testkit.DeadPID(t)
	tr.createLeaseExcl("features/a.md", ready)
	held := tr.newLease("in-progress/a.md", "done", "features/a.md", "tok", 600)
	held.PID = ready.PID
	tr.linkLeaseExcl("in-progress/a.md", held)
	if tr.claimInFlight("a.md") {
		t.Fatal("a finished claim counts as in flight")
	}
	if problems := tr.Check(scan(t, tr)); len(problems) != 0 {
		t.Fatalf("check reports a finished claim's leftover: %+v", problems)
	}
	got := tr.Repair(scan(t, tr))
	if len(got.Fixed) != 0 || !tr.exists("in-progress/a.md") || tr.ReadLease("features/a.md") != nil || tr.ReadLease("in-progress/a.md") == nil {
		t.Fatalf("finished claim disturbed: %+v", got)
	}
}

// Releasing a claim also drops a leftover ready-path lease of that claim, so
// it cannot hold the returned plan.
func TestReleaseDropsClaimLeftover(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	ip, err := tr.Claim("features/a.md", "w", 60)
	if err != nil {
		t.Fatal(err)
	}
	leftover := *tr.ReadLease(ip)
	leftover.Plan = "features/a.md"
	tr.createLeaseExcl("features/a.md", leftover)
	if _, err := tr.Release(ip, Actor{AgentID: "w"}); err != nil {
		t.Fatal(err)
	}
	if l := tr.ReadLease("features/a.md"); l != nil {
		t.Fatalf("leftover lease holds the released plan: %+v", l)
	}
	if _, err := tr.Claim("features/a.md", "other", 60); err != nil {
		t.Fatalf("released plan not claimable: %v", err)
	}
}

// Half way through a link+unlink move the plan is in both lanes as one file:
// that claim is in flight, while a distinct twin in its lane is not.
func TestClaimInFlightSeesHalfMove(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	l := tr.newLease("features/a.md", "mover", "", "tok", 60)
	tr.createLeaseExcl("features/a.md", l)
	if err := os.Link(tr.Abs("features/a.md"), tr.Abs("in-progress/a.md")); err != nil {
		t.Fatal(err)
	}
	if !tr.claimInFlight("a.md") {
		t.Fatal("a half-done move is not seen as a claim in flight")
	}
	if _, err := tr.Recover("in-progress/a.md", Actor{AgentID: "op"}, 60); !errors.Is(err, ErrClaimed) {
		t.Fatalf("recover during a half-done move: %v", err)
	}
}

// A live lease left from an earlier plan of the same name (say, completed
// while a repair was skipped) does not keep a new claim from its lease.
func TestClaimReplacesLeftoverLease(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	old := tr.newLease("in-progress/a.md", "earlier", "", "old", 3600)
	old.ClaimedAt -= 600
	os.MkdirAll(tr.Abs(".leases"), 0o755)
	os.WriteFile(tr.leasePath("in-progress/a.md"), model.EncodeLease(old), 0o644)
	if _, err := tr.Claim("features/a.md", "w", 60); err != nil {
		t.Fatal(err)
	}
	if l := tr.ReadLease("in-progress/a.md"); l == nil || l.AgentID != "w" {
		t.Fatalf("lease after claim: %+v", l)
	}
}
