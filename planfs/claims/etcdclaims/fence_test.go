//go:build etcd

package etcdclaims

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// TestPushBranchFencedByKey: a holder's branch goes to the git remote only
// while its key is at its revision, and only from the value it last saw
// there. Once the key changed hands (released, claimed by another) the
// old holder's push is ErrLost and the branch stays; a push from a stale
// branch value is ErrBranchMoved and overwrites nothing; the new holder
// pushes on from what it found.
func TestPushBranchFencedByKey(t *testing.T) {
	t.Parallel()
	clone := clonedProject(t, 1)
	bare := filepath.Join(filepath.Dir(clone), "remote.git")
	open := func(dir string) *Backend {
		b, err := Open(claims.Config{Backend: "etcd", Project: dir, Endpoints: []string{endpoint}, Timeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	a, b := open(clone), open(clone+"2")
	ctx := context.Background()
	const branch = "refs/heads/feature/p000"
	tip := func() string { return gitIn(t, bare, "for-each-ref", "--format=%(objectname)", branch) }
	commit := func(dir, parent, msg string) string {
		return gitIn(t, dir, "commit-tree", gitIn(t, dir, "rev-parse", parent+"^{tree}"), "-p", parent, "-m", msg)
	}
	old, err := a.Claim(ctx, viewOf(t, a), "features/p000.md", claims.Holder{AgentID: "old"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	c1 := commit(clone, "HEAD", "old 1")
	if _, err := a.PushBranch(ctx, old, claims.BranchUpdate{Ref: branch, New: c1}); err != nil {
		t.Fatalf("first push: %v", err)
	}
	if tip() != c1 {
		t.Fatalf("branch at %q after the push, want %s", tip(), c1)
	}
	c1b := commit(clone, "HEAD", "old 1b")
	if _, err := a.PushBranch(ctx, old, claims.BranchUpdate{Ref: branch, New: c1b}); !errors.Is(err, claims.ErrBranchMoved) {
		t.Fatalf("push expecting no branch where there is one: %v", err)
	}
	if err := b.Release(ctx, old, "operator"); err != nil {
		t.Fatal(err)
	}
	next, err := b.Claim(ctx, viewOf(t, b), "features/p000.md", claims.Holder{AgentID: "new"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	c2 := commit(clone, c1, "old 2")
	if _, err := a.PushBranch(ctx, old, claims.BranchUpdate{Ref: branch, Old: c1, New: c2}); !errors.Is(err, claims.ErrLost) {
		t.Fatalf("push under a key taken over: %v", err)
	}
	if tip() != c1 {
		t.Fatalf("the fenced holder moved the branch to %s", tip())
	}
	gitIn(t, clone+"2", "fetch", "-q", "origin", branch)
	c3 := commit(clone+"2", c1, "new 1")
	if _, err := b.PushBranch(ctx, next, claims.BranchUpdate{Ref: branch, Old: c1, New: c3}); err != nil {
		t.Fatalf("the new holder's push: %v", err)
	}
	// Had the old holder's push slipped in before it (the window between
	// its check and its push), the new holder's is refused, not forced.
	if _, err := b.PushBranch(ctx, next, claims.BranchUpdate{Ref: branch, Old: c1, New: commit(clone+"2", c3, "new 2")}); !errors.Is(err, claims.ErrBranchMoved) {
		t.Fatalf("a push from a value the branch left: %v", err)
	}
	if tip() != c3 {
		t.Fatalf("branch at %s, want the new holder's %s", tip(), c3)
	}
}
