//go:build etcd

package etcdclaims

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// clonedProject makes a bare remote whose dev branch holds the plans of a
// fresh project, and two clones of it, "<clone>" and "<clone>2" (another
// machine); it returns the first.
func clonedProject(t *testing.T, n int) string {
	t.Helper()
	seed, _ := project(t, n)
	root := t.TempDir()
	bare := filepath.Join(root, "remote.git")
	gitIn(t, root, "init", "-q", "--bare", "-b", "dev", bare)
	os.WriteFile(filepath.Join(seed, ".plans", "README.md"), []byte("plans\n"), 0o644)
	gitIn(t, seed, "init", "-q", "-b", "dev")
	gitIn(t, seed, "add", "-A")
	gitIn(t, seed, "commit", "-qm", "plans")
	gitIn(t, seed, "push", "-q", bare, "HEAD:dev")
	clone := filepath.Join(root, "clone")
	gitIn(t, root, "clone", "-q", bare, clone)
	gitIn(t, root, "clone", "-q", bare, clone+"2")
	return clone
}

// TestCompleteMovesOnGit: with the project's remote, lanes come from its
// integration branch; Complete moves the plan there and deletes the key,
// and a holder that lost its key moves nothing.
func TestCompleteMovesOnGit(t *testing.T) {
	t.Parallel()
	clone := clonedProject(t, 3)
	cfg := claims.Config{Backend: "etcd", Project: clone, Endpoints: []string{endpoint}, Timeout: 20 * time.Second}
	be, err := claims.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	b := be.(*Backend)
	if b.lanes == nil {
		t.Fatal("lanes not read from the remote")
	}
	ctx := context.Background()
	v := viewOf(t, b)
	if v.Tip == "" || v.Snapshot.PlanAt("features/p000.md") == nil {
		t.Fatalf("view from the remote: tip %q, plans %+v", v.Tip, v.Snapshot.Plans)
	}
	h, err := b.Claim(ctx, v, "features/p000.md", claims.Holder{AgentID: "alice"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := b.Complete(ctx, h, model.Completed)
	if err != nil || dst != "completed/p000.md" {
		t.Fatalf("complete: %q, %v", dst, err)
	}
	v = viewOf(t, b)
	if v.Lease("p000") != nil || v.Snapshot.PlanAt("completed/p000.md") == nil {
		t.Fatalf("after complete: lease %+v, plans %+v", v.Lease("p000"), v.Snapshot.Plans)
	}
	// Another machine's clone, its checkout never pulled, sees the plan
	// done on the remote and cannot claim it again.
	elsewhere, err := Open(claims.Config{Backend: "etcd", Project: clone + "2", Endpoints: []string{endpoint}, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer elsewhere.Close()
	if elsewhere.Prefix() != b.Prefix() {
		t.Fatalf("the other clone's prefix %s, want %s", elsewhere.Prefix(), b.Prefix())
	}
	ve := viewOf(t, elsewhere)
	if ve.Snapshot.PlanAt("completed/p000.md") == nil {
		t.Fatalf("the other clone's view: %+v", ve.Snapshot.Plans)
	}
	if _, err := elsewhere.Claim(ctx, ve, "features/p000.md", claims.Holder{AgentID: "bob"}, time.Minute); !errors.Is(err, claims.ErrLost) {
		t.Fatalf("claim of a plan completed elsewhere: %v, want ErrLost", err)
	}
	// A lost lease completes nothing.
	h2, err := b.Claim(ctx, v, "features/p001.md", claims.Holder{AgentID: "alice"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, h2, "changed my mind"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Complete(ctx, h2, model.Completed); !errors.Is(err, claims.ErrLost) {
		t.Fatalf("complete of a released lease: %v, want ErrLost", err)
	}
	if dst, err := b.MovePlan(ctx, "features/p001.md", model.Blocked, "operator", ""); err != nil || dst != "blocked/p001.md" {
		t.Fatalf("move plan: %q, %v", dst, err)
	}
	v = viewOf(t, b)
	if v.Snapshot.PlanAt("features/p001.md") != nil || v.Snapshot.PlanAt("blocked/p001.md") == nil {
		t.Fatalf("after the move: %+v", v.Snapshot.Plans)
	}
	// Opened again, the project id (its root commit) is the same.
	other, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if other.Prefix() != b.Prefix() {
		t.Fatalf("prefixes differ: %s vs %s", other.Prefix(), b.Prefix())
	}
}
