package gitclaims

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// commitOn makes a commit in dir on top of parent (a new file named
// after msg) without moving any ref, and returns it.
func commitOn(t *testing.T, dir, parent, msg string) string {
	t.Helper()
	tree := gitIn(t, dir, "mktree")
	if parent != "" {
		tree = gitIn(t, dir, "rev-parse", parent+"^{tree}")
		return gitIn(t, dir, "commit-tree", tree, "-p", parent, "-m", msg)
	}
	return gitIn(t, dir, "commit-tree", tree, "-m", msg)
}

// remoteRef is what bare holds at ref ("" for nothing).
func remoteRef(t *testing.T, bare, ref string) string {
	t.Helper()
	out, _ := os.ReadFile(filepath.Join(bare, filepath.FromSlash(ref)))
	if len(out) > 0 {
		return strings.TrimSpace(string(out))
	}
	for _, line := range strings.Split(gitIn(t, bare, "for-each-ref", "--format=%(objectname) %(refname)", ref), "\n") {
		if oid, r, ok := strings.Cut(line, " "); ok && r == ref {
			return oid
		}
	}
	return ""
}

// TestPushBranchFencedByLease: a holder's branch push goes with a renewal
// of its lease in one atomic push. Once the lease ref moved (released by
// an operator, claimed by another worker) the old holder's push is
// ErrLost and neither ref moves; a push from a stale branch value is
// ErrBranchMoved and neither ref moves either; the new holder pushes on
// from the branch as it found it. By path and through git daemon.
func TestPushBranchFencedByLease(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"path", "daemon"} {
		t.Run(via, func(t *testing.T) {
			bare := remoteWith(t, readyPlans(1))
			url := bare
			if via == "daemon" {
				url = gitDaemon(t, filepath.Dir(bare)) + filepath.Base(bare)
			}
			a, adir := cloneOf(t, url)
			b, bdir := cloneOf(t, url)
			const branch = "refs/heads/feature/p000"
			lease := LeaseRefs + "p000"
			old, err := a.Claim(ctx, view(t, a), "features/p000.md", claims.Holder{AgentID: "old"}, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			c1 := commitOn(t, adir, "HEAD", "old 1")
			held, err := a.PushBranch(ctx, old, claims.BranchUpdate{Ref: branch, New: c1})
			if err != nil {
				t.Fatalf("first push: %v", err)
			}
			if held.Version == old.Version || remoteRef(t, bare, lease) != held.Version || remoteRef(t, bare, branch) != c1 {
				t.Fatalf("after the push: lease %s (held %s, was %s), branch %s (want %s)", remoteRef(t, bare, lease), held.Version, old.Version, remoteRef(t, bare, branch), c1)
			}
			// A push from a stale view of the branch moves nothing, not
			// even the lease.
			c1b := commitOn(t, adir, "HEAD", "old 1b")
			if _, err := a.PushBranch(ctx, held, claims.BranchUpdate{Ref: branch, New: c1b}); !errors.Is(err, claims.ErrBranchMoved) {
				t.Fatalf("push expecting no branch where there is one: %v", err)
			}
			if remoteRef(t, bare, lease) != held.Version || remoteRef(t, bare, branch) != c1 {
				t.Fatal("a refused atomic push moved a ref")
			}
			// The lease goes to another worker: an operator's release, a
			// fresh claim in another clone.
			vb := view(t, b)
			stale, err := claims.HeldFrom(vb, "p000", "old", "")
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Release(ctx, stale, "operator"); err != nil {
				t.Fatal(err)
			}
			next, err := b.Claim(ctx, view(t, b), "features/p000.md", claims.Holder{AgentID: "new"}, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			c2 := commitOn(t, adir, c1, "old 2")
			if _, err := a.PushBranch(ctx, held, claims.BranchUpdate{Ref: branch, Old: c1, New: c2}); !errors.Is(err, claims.ErrLost) {
				t.Fatalf("push under a lease taken over: %v", err)
			}
			if got := remoteRef(t, bare, branch); got != c1 {
				t.Fatalf("the fenced holder moved the branch to %s", got)
			}
			if remoteRef(t, bare, lease) != next.Version {
				t.Fatal("the fenced holder's push moved the new holder's lease")
			}
			// The new holder pushes on from what it found there.
			gitIn(t, bdir, "fetch", "-q", "origin", branch)
			c3 := commitOn(t, bdir, c1, "new 1")
			if _, err := b.PushBranch(ctx, next, claims.BranchUpdate{Ref: branch, Old: c1, New: c3}); err != nil {
				t.Fatalf("the new holder's push: %v", err)
			}
			if got := remoteRef(t, bare, branch); got != c3 {
				t.Fatalf("branch at %s after the new holder's push, want %s", got, c3)
			}
		})
	}
}

// TestPushBranchServerSideFence: the lease ref moves on the remote after
// the client read it (a pre-receive hook moves it while the push waits),
// so the client's own lease check passes and only the remote's atomic
// transaction can refuse: ErrLost, and the branch does not move.
func TestPushBranchServerSideFence(t *testing.T) {
	t.Parallel()
	bare := remoteWith(t, readyPlans(1))
	a, adir := cloneOf(t, bare)
	const branch = "refs/heads/feature/p000"
	lease := LeaseRefs + "p000"
	held, err := a.Claim(ctx, view(t, a), "features/p000.md", claims.Holder{AgentID: "old"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// The takeover's lease commit, made beforehand; the hook puts it in
	// place outside the push's quarantine.
	other := commitOn(t, bare, held.Version, "taken over")
	hook := filepath.Join(bare, "hooks", "pre-receive")
	script := "#!/bin/sh\ncat >/dev/null\nenv -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES git update-ref " + lease + " " + other + " " + held.Version + " || exit 1\nexit 0\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c1 := commitOn(t, adir, "HEAD", "old 1")
	_, err = a.PushBranch(ctx, held, claims.BranchUpdate{Ref: branch, New: c1})
	if !errors.Is(err, claims.ErrLost) {
		t.Fatalf("push whose lease moved during it: %v", err)
	}
	if got := remoteRef(t, bare, lease); got != other {
		t.Fatalf("lease ref %s, want the takeover's %s (did the hook run?)", got, other)
	}
	if got := remoteRef(t, bare, branch); got != "" {
		t.Fatalf("the branch moved to %s under a lease taken over mid-push", got)
	}
}
