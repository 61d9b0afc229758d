package gitclaims

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// leaseCommit writes a commit whose tree holds lease as lease.json, with
// parent as its parent when set (a renewal or takeover chains on the lease
// it replaces), and returns its oid.
func (b *Backend) leaseCommit(ctx context.Context, lease model.Lease, parent string) (string, error) {
	blob, err := b.writeObject(ctx, "blob", model.EncodeLease(lease))
	if err != nil {
		return "", err
	}
	raw, err := hex.DecodeString(blob)
	if err != nil {
		return "", fmt.Errorf("git hash-object: bad id %q", blob)
	}
	tree, err := b.writeObject(ctx, "tree", append([]byte("100644 lease.json\x00"), raw...))
	if err != nil {
		return "", err
	}
	stamp := fmt.Sprintf("%d +0000", int64(lease.ClaimedAt))
	who := "fleetwatch <fleetwatch@localhost> " + stamp
	text := "tree " + tree + "\n"
	if parent != "" {
		text += "parent " + parent + "\n"
	}
	text += "author " + who + "\ncommitter " + who + "\n\nlease " + lease.Plan + " " + lease.AgentID + " epoch " + fmt.Sprint(lease.Epoch) + "\n"
	return b.writeObject(ctx, "commit", []byte(text))
}

// newLease is h's lease on rel for ttl.
func newLease(rel string, h claims.Holder, ttl time.Duration, epoch int64) model.Lease {
	now := float64(time.Now().UnixNano()) / 1e9
	host, pid := h.Host, h.PID
	if host == "" {
		host, _ = os.Hostname()
	}
	if pid == 0 {
		pid = os.Getpid()
	}
	return model.Lease{
		Plan: rel, AgentID: h.AgentID, ClaimedAt: now, ExpiresAt: now + ttl.Seconds(), Origin: rel,
		Host: host, PID: pid, Token: claims.Nonce(), TTL: ttl.Seconds(), Epoch: epoch, Nonce: claims.Nonce(),
		RunsAs: h.RunsAs,
	}
}

// Claim takes rel, a ready plan of v, for h with a create-only push of its
// lease ref. A lost race is ErrLost.
func (b *Backend) Claim(ctx context.Context, v *claims.View, rel string, h claims.Holder, ttl time.Duration) (claims.Held, error) {
	if err := claims.ValidTTL(ttl); err != nil {
		return claims.Held{}, err
	}
	p := v.Snapshot.PlanAt(rel)
	if p == nil || !p.Lane.Ready() {
		if v.Snapshot.PlanAt(string(model.RelOf(model.InProgress, model.Rel(rel).Name()))) != nil {
			return claims.Held{}, fmt.Errorf("%s: already claimed: %w", rel, claims.ErrLost)
		}
		return claims.Held{}, fmt.Errorf("%s: not a ready plan on %s/%s: %w", rel, b.remote, b.integration, claims.ErrLost)
	}
	if r := v.Lease(p.Slug); r != nil {
		return claims.Held{}, fmt.Errorf("%s: leased by %s: %w", rel, r.AgentID, claims.ErrLost)
	}
	lease := newLease(rel, h, ttl, 1)
	return b.install(ctx, p.Slug, rel, lease, "")
}

// install pushes lease as slug's lease ref over old ("" = create-only).
func (b *Backend) install(ctx context.Context, slug, rel string, lease model.Lease, old string) (claims.Held, error) {
	began := time.Now()
	oid, err := b.leaseCommit(ctx, lease, old)
	if err != nil {
		return claims.Held{}, err
	}
	if err := b.pushLease(ctx, update{Ref: leaseRef(slug), Old: old, New: oid}); err != nil {
		return claims.Held{}, err
	}
	return b.installed(slug, rel, lease, oid, began), nil
}

// installed records lease, now at oid on the remote, and returns it held.
func (b *Backend) installed(slug, rel string, lease model.Lease, oid string, began time.Time) claims.Held {
	lease.Backend = backendName
	b.mu.Lock()
	b.leases[oid] = lease
	b.mu.Unlock()
	return claims.Held{Slug: slug, Rel: rel, Lease: lease, Version: oid, Renewed: began}
}

// renewal is the lease that follows held's for ttl from now.
func renewal(held claims.Held, ttl time.Duration) model.Lease {
	next := held.Lease
	now := float64(time.Now().UnixNano()) / 1e9
	next.ExpiresAt, next.TTL, next.Epoch, next.Nonce = now+ttl.Seconds(), ttl.Seconds(), next.Epoch+1, claims.Nonce()
	next.Backend = ""
	return next
}

// Renew is the heartbeat: a new lease commit over held's, CAS on its oid.
func (b *Backend) Renew(ctx context.Context, held claims.Held, ttl time.Duration) (claims.Held, error) {
	if err := claims.ValidTTL(ttl); err != nil {
		return claims.Held{}, err
	}
	h, err := b.install(ctx, held.Slug, held.Rel, renewal(held, ttl), held.Version)
	if err != nil {
		return claims.Held{}, fmt.Errorf("%s: lease lost (renewal refused): %w", held.Slug, err)
	}
	return h, nil
}

// TakeOver is recover: slug's lease in v, once this machine has seen it
// unchanged for its TTL plus grace, becomes h's, CAS on the oid seen.
func (b *Backend) TakeOver(ctx context.Context, v *claims.View, slug string, h claims.Holder, ttl time.Duration) (claims.Held, error) {
	if err := claims.ValidTTL(ttl); err != nil {
		return claims.Held{}, err
	}
	r := v.Lease(slug)
	if r == nil {
		return claims.Held{}, fmt.Errorf("%s: %w", slug, claims.ErrNoLease)
	}
	if r.Live {
		return claims.Held{}, &claims.TooEarlyError{Slug: slug, Seen: r.SeenFor, Need: r.Need}
	}
	rel := r.Origin
	if rel == "" {
		rel = r.Plan
	}
	lease := newLease(rel, h, ttl, r.Epoch+1)
	return b.install(ctx, slug, rel, lease, r.Version)
}

// Release drops held's lease ref, CAS on its oid; the plan stays where it
// is on the integration branch, free again.
func (b *Backend) Release(ctx context.Context, held claims.Held, reason string) error {
	if err := b.pushLease(ctx, update{Ref: leaseRef(held.Slug), Old: held.Version}); err != nil {
		return fmt.Errorf("%s: cannot release: %w", held.Slug, err)
	}
	return nil
}

// PushBranch pushes u together with a renewal of held's lease, as one
// atomic push: the remote moves both refs or neither, each by
// compare-and-swap (the lease ref from held.Version, the branch from
// u.Old). A holder whose lease was taken over while it was stopped can
// therefore never move the branch, and the branch never loses commits
// someone else pushed. ErrLost: the lease ref moved; ErrBranchMoved: the
// branch did.
func (b *Backend) PushBranch(ctx context.Context, held claims.Held, u claims.BranchUpdate) (claims.Held, error) {
	ttl := time.Duration(held.Lease.TTL * float64(time.Second))
	if err := claims.ValidTTL(ttl); err != nil {
		return claims.Held{}, fmt.Errorf("%s: %w", held.Slug, err)
	}
	if held.Version == "" {
		return claims.Held{}, fmt.Errorf("%s: no lease version to push under: %w", held.Slug, claims.ErrNotHolder)
	}
	began := time.Now()
	next := renewal(held, ttl)
	oid, err := b.leaseCommit(ctx, next, held.Version)
	if err != nil {
		return claims.Held{}, err
	}
	lease := update{Ref: leaseRef(held.Slug), Old: held.Version, New: oid}
	if err := b.pushFenced(ctx, lease, update{Ref: u.Ref, Old: u.Old, New: u.New}); err != nil {
		return claims.Held{}, fmt.Errorf("%s: %w", held.Slug, err)
	}
	return b.installed(held.Slug, held.Rel, next, oid, began), nil
}
