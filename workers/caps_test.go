package workers

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// racingBackend is the tree's own lease files where another worker's
// claim lands right after this worker's first: the two race for the last
// slot, and both claims succeed.
type racingBackend struct {
	*claims.Local
	other func()
}

func (b *racingBackend) Claim(ctx context.Context, v *claims.View, rel string, h claims.Holder, ttl time.Duration) (claims.Held, error) {
	held, err := b.Local.Claim(ctx, v, rel, h, ttl)
	if other := b.other; err == nil && other != nil {
		b.other = nil
		other()
	}
	return held, err
}

// capsTree is a tree with plans a, b and c ready and x held by agent x,
// under limits:.
func capsTree(t *testing.T, limits string) *planfs.Tree {
	t.Helper()
	dir := t.TempDir()
	if _, err := planfs.Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b", "c", "x"} {
		if err := os.WriteFile(filepath.Join(dir, ".plans", "features", n+".md"), []byte("# "+n+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte(limits), 0o644); err != nil {
		t.Fatal(err)
	}
	tree, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tree.Claim("features/x.md", "x", 600); err != nil {
		t.Fatal(err)
	}
	return tree
}

func limitsOf(t *testing.T, tree *planfs.Tree) config.Limits {
	t.Helper()
	s, err := config.Load(tree.Project)
	if err != nil {
		t.Fatal(err)
	}
	return s.Limits
}

// TestRaceForTheLastSlotBacksOff: the cap has one slot left when worker
// w looks; w claims a, and another worker's claim of the next plan lands
// at once. w's read after its claim counts 3 of 2: it hands a back (free
// again in features/, no lease) and exits idle, saying so; the other
// worker's lease and x's stand.
func TestRaceForTheLastSlotBacksOff(t *testing.T) {
	tree := capsTree(t, "limits: {fleet: 2}\n")
	var stdout, stderr bytes.Buffer
	other := func() {
		if _, err := tree.Claim("features/c.md", "y", 600); err != nil {
			t.Errorf("the other worker's claim: %v", err)
		}
	}
	w := &WorkOnce{Tree: tree, Worker: model.Worker{AgentID: "w", Tier: model.Mid}, MaxPlans: 1, TTL: 600,
		Claims: &racingBackend{Local: &claims.Local{Tree: tree, Seconds: 600}, other: other}, Stdout: &stdout,
		Say: func(format string, args ...any) { fmt.Fprintf(&stderr, format+"\n", args...) }}
	w.limits = limitsOf(t, tree)
	side, code := w.side(context.Background())
	if code != going {
		t.Fatalf("side: %d %s", code, stderr.String())
	}
	code, note := w.each(context.Background(), side, nil, 0)
	want := "limits: the fleet has 3 of 2 live runs counting this claim"
	if code != StatusNothing || !strings.Contains(note, want) || !strings.Contains(stderr.String(), "handed back") || stdout.Len() != 0 {
		t.Fatalf("code %d, note %q, stdout %q, stderr %q", code, note, stdout.String(), stderr.String())
	}
	for rel, agent := range map[string]string{"in-progress/x.md": "x", "in-progress/c.md": "y"} {
		if l := tree.ReadLease(rel); l == nil || l.AgentID != agent {
			t.Errorf("%s: lease %+v, want %s's", rel, l, agent)
		}
	}
	snap, err := tree.Scan()
	if err != nil {
		t.Fatal(err)
	}
	if p := snap.PlanAt("features/a.md"); p == nil || tree.ReadLease("features/a.md") != nil || tree.ReadLease("in-progress/a.md") != nil {
		t.Errorf("a was not handed back free: %+v", snap.Plans)
	}
}

// TestClaimWithRoomRecordsWhatItRunsAs: with room under every cap, the
// claim stands and its lease file records the worker's tier, endpoint and
// provider.
func TestClaimWithRoomRecordsWhatItRunsAs(t *testing.T) {
	tree := capsTree(t, "limits: {fleet: 3, tier: {mid: 2}}\n")
	var stdout, stderr bytes.Buffer
	w := &WorkOnce{Tree: tree, Worker: model.Worker{AgentID: "w", Tier: model.Mid}, MaxPlans: 1, TTL: 600, Stdout: &stdout,
		Say: func(format string, args ...any) { fmt.Fprintf(&stderr, format+"\n", args...) }}
	w.Endpoint.Name, w.Endpoint.Provider = "claude", "anthropic"
	w.limits = limitsOf(t, tree)
	w.Tree.RunsAs = w.runsAs()
	side, code := w.side(context.Background())
	if code != going {
		t.Fatalf("side: %d %s", code, stderr.String())
	}
	if code, note := w.each(context.Background(), side, nil, 0); code != StatusOK {
		t.Fatalf("code %d, note %q, stderr %q", code, note, stderr.String())
	}
	l := tree.ReadLease("in-progress/a.md")
	if l == nil || l.RunsAs != (model.RunsAs{Tier: "mid", Endpoint: "claude", Provider: "anthropic"}) || l.Host == "" {
		t.Errorf("the lease records %+v", l)
	}
}

// TestCapsKeepADecidedPlanInTheInbox: a decided plan-first plan its agent
// took up from the inbox, when a racing claim fills the cap, goes back to
// the inbox as decided (its approval kept for the next run), not to its
// lane.
func TestCapsKeepADecidedPlanInTheInbox(t *testing.T) {
	tree := capsTree(t, "limits: {fleet: 1}\n")
	c, err := tree.ClaimHeld("features/a.md", "w", 600)
	if err != nil {
		t.Fatal(err)
	}
	// No Claims: the lease files' own side, which holds the inbox.
	w := &WorkOnce{Tree: tree, Worker: model.Worker{AgentID: "w", Tier: model.Mid}, MaxPlans: 1, TTL: 600,
		Stdout: &bytes.Buffer{}, Say: func(string, ...any) {}}
	w.limits = limitsOf(t, tree)
	if err := tree.AwaitApproval(c.Rel, planfs.Actor{AgentID: "w", Token: c.Token}); err != nil {
		t.Fatal(err)
	}
	if err := tree.MarkResume(c.Rel, planfs.Agent("coordinator")); err != nil {
		t.Fatal(err)
	}
	held, err := tree.Resume(c.Rel, "w", 600, false)
	if err != nil {
		t.Fatal(err)
	}
	w.markResumed(held.Rel)
	side, code := w.side(context.Background())
	if code != going {
		t.Fatalf("side: %d", code)
	}
	why, code := w.capsHold(context.Background(), side, &claim{rel: held.Rel, token: held.Token})
	if code != StatusNothing || !strings.Contains(why, "limits: the fleet has 2 of 1 live runs") {
		t.Fatalf("code %d, why %q", code, why)
	}
	l := tree.ReadLease(held.Rel)
	if l == nil || l.AgentID != "w" || l.Awaiting != model.AwaitResume {
		t.Fatalf("lease after the hand-back: %+v, want w's, awaiting resume", l)
	}
	if _, err := tree.Resume(held.Rel, "w", 600, false); err != nil {
		t.Errorf("the next run cannot take the decided plan up: %v", err)
	}
}
