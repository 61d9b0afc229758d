package planfs

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
)

// awaitingTree is a tree with one plan claimed by w and handed to the inbox,
// its clock under the test's control.
func awaitingTree(t *testing.T) (*Tree, Claimed, *time.Time) {
	t.Helper()
	tr := mkTree(t, "features/a.md:")
	clock := time.Now()
	tr.Now = func() time.Time { return clock }
	held, err := tr.ClaimHeld("features/a.md", "w", 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.AwaitApproval(held.Rel, Actor{AgentID: "w", Token: held.Token}); err != nil {
		t.Fatal(err)
	}
	return tr, held, &clock
}

func TestAwaitApprovalOnlyByHolder(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	held, err := tr.ClaimHeld("features/a.md", "w", 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.AwaitApproval(held.Rel, Actor{AgentID: "w", Token: "other"}); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("another token: %v", err)
	}
	if err := tr.AwaitApproval(held.Rel, Agent("x")); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("another agent: %v", err)
	}
	if err := tr.MarkResume(held.Rel, Agent("op")); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("mark resume of a lease not in the inbox: %v", err)
	}
	if err := tr.AwaitApproval(held.Rel, Actor{AgentID: "w", Token: held.Token}); err != nil {
		t.Fatal(err)
	}
	l := tr.ReadLease(held.Rel)
	if l.Awaiting != model.AwaitApproval || l.ExpiresAt-tr.NowSeconds() < model.MaxLeaseTTL-5 {
		t.Fatalf("lease after AwaitApproval: %+v", l)
	}
	if l.AwaitingText() != "awaiting approval" {
		t.Fatalf("AwaitingText %q", l.AwaitingText())
	}
	if !hasEvent(t, tr, "awaiting-approval") {
		t.Fatal("no awaiting-approval event")
	}
}

// An inbox-held lease never expires into recover, and neither check nor
// repair treats it as stale, however much time passes.
func TestAwaitingLeaseLeftAlone(t *testing.T) {
	tr, held, clock := awaitingTree(t)
	*clock = clock.Add(30 * 24 * time.Hour) // past even MaxLeaseTTL
	if l := tr.ReadLease(held.Rel); !l.Active(tr.NowSeconds()) || l.Implausible(tr.NowSeconds()) != "" {
		t.Fatalf("inbox lease expired: %+v", l)
	}
	if _, err := tr.Recover(held.Rel, Agent("x"), 3600); err == nil || !strings.Contains(err.Error(), "awaiting approval in the inbox") {
		t.Fatalf("recover by another: %v", err)
	}
	if _, err := tr.Recover(held.Rel, Agent("w"), 3600); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("recover by its own agent: %v", err)
	}
	snap, err := tr.Scan()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range tr.Check(snap) {
		if strings.Contains(w.File, "a.md") {
			t.Errorf("check reports the inbox lease: %+v", w)
		}
	}
	if r := tr.Repair(snap); len(r.Fixed)+len(r.Unfixed) > 0 {
		t.Errorf("repair touched it: %+v", r)
	}
	if l := tr.ReadLease(held.Rel); l == nil || l.Token != held.Token || l.Awaiting != model.AwaitApproval {
		t.Fatalf("lease after repair: %+v", l)
	}
	// Nobody picks it: it is in in-progress/, and a named claim refuses.
	if _, err := tr.Claim("features/a.md", "x", 10); err == nil {
		t.Fatal("claimed an inbox-held plan")
	}
}

// Its holder may still give it back; the lease goes with it.
func TestAwaitingReleasedByHolder(t *testing.T) {
	tr, held, _ := awaitingTree(t)
	if _, err := tr.Release(held.Rel, Agent("x")); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("release by another: %v", err)
	}
	dst, err := tr.Release(held.Rel, Actor{AgentID: "w", Token: held.Token})
	if err != nil || dst != "features/a.md" {
		t.Fatalf("release by the holder: %q %v", dst, err)
	}
	if tr.ReadLease(held.Rel) != nil {
		t.Fatal("lease left behind")
	}
}

// Resume is a fenced takeover: only once decided, only its own agent unless
// takeOver, and the old token is dead afterwards.
func TestResumeFencing(t *testing.T) {
	tr, held, _ := awaitingTree(t)
	old := Actor{AgentID: "w", Token: held.Token}
	if _, err := tr.Resume(held.Rel, "w", 60, false); !errors.Is(err, ErrClaimed) {
		t.Fatalf("resume before a decision: %v", err)
	}
	if err := tr.MarkResume(held.Rel, Agent("op")); err != nil {
		t.Fatal(err)
	}
	if err := tr.MarkResume(held.Rel, Agent("op")); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("a second decision: %v", err)
	}
	if _, err := tr.Resume(held.Rel, "x", 60, false); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("another agent without takeOver: %v", err)
	}
	c, err := tr.Resume(held.Rel, "w", 60, false)
	if err != nil || c.Token == "" || c.Token == held.Token {
		t.Fatalf("resume: %+v %v", c, err)
	}
	l := tr.ReadLease(held.Rel)
	if l.Awaiting != "" || l.AgentID != "w" || l.Origin != "features/a.md" || l.ExpiresAt-tr.NowSeconds() > 61 {
		t.Fatalf("lease after resume: %+v", l)
	}
	if _, err := tr.Renew(held.Rel, old, 60); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("the old token renewed: %v", err)
	}
	if _, err := tr.Complete(held.Rel, model.ReviewNeeded, old); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("the old token completed: %v", err)
	}
	if _, err := tr.Renew(held.Rel, Actor{AgentID: "w", Token: c.Token}, 60); err != nil {
		t.Fatalf("the new token: %v", err)
	}
	if _, err := tr.Resume(held.Rel, "w", 60, false); !errors.Is(err, ErrClaimed) {
		t.Fatalf("a second resume: %v", err)
	}
	if !hasEvent(t, tr, "resumed") || !hasEvent(t, tr, "decided") {
		t.Fatal("events missing")
	}
}

func TestResumeTakeOver(t *testing.T) {
	tr, held, _ := awaitingTree(t)
	if err := tr.MarkResume(held.Rel, Agent("op")); err != nil {
		t.Fatal(err)
	}
	c, err := tr.Resume(held.Rel, "x", 60, true)
	if err != nil {
		t.Fatal(err)
	}
	if l := tr.ReadLease(held.Rel); l.AgentID != "x" || l.Token != c.Token {
		t.Fatalf("lease after takeover: %+v", l)
	}
	evs, _ := tr.Events()
	last := evs[len(evs)-1]
	if last.Event != "resumed" || !strings.Contains(last.Reason, "takeover from w") {
		t.Fatalf("last event %+v", last)
	}
}

func hasEvent(t *testing.T, tr *Tree, name string) bool {
	t.Helper()
	evs, err := tr.Events()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Event == name {
			return true
		}
	}
	return false
}

// A heartbeat, even its holder's, does not renew an inbox-held lease: the
// inbox holds it until a resume.
func TestAwaitingLeaseNotRenewed(t *testing.T) {
	tr, held, _ := awaitingTree(t)
	before := tr.ReadLease(held.Rel).ExpiresAt
	for _, a := range []Actor{{AgentID: "w", Token: held.Token}, Agent("w")} {
		if _, err := tr.Renew(held.Rel, a, 10); !errors.Is(err, ErrNotOwner) || !strings.Contains(err.Error(), "inbox") {
			t.Fatalf("renew by %+v: %v", a, err)
		}
	}
	if l := tr.ReadLease(held.Rel); l.ExpiresAt != before || l.Awaiting != model.AwaitApproval {
		t.Fatalf("lease changed: %+v", l)
	}
}
