//go:build etcd

package etcdclaims

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// newLease is h's lease on rel for ttl, as stored: Token stays empty (the
// key's create revision, filled on every read).
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
		Host: host, PID: pid, TTL: ttl.Seconds(), Epoch: epoch, Nonce: claims.Nonce(),
		RunsAs: h.RunsAs,
	}
}

// Claim takes rel, a ready plan of v, for h: a transaction that creates
// its key only if it does not exist, on the worker session's lease or, for
// a claim-only run, on an etcd lease of its own with TTL ttl. A lost race
// is ErrLost.
func (b *Backend) Claim(ctx context.Context, v *claims.View, rel string, h claims.Holder, ttl time.Duration) (claims.Held, error) {
	if err := claims.ValidTTL(ttl); err != nil {
		return claims.Held{}, err
	}
	p := v.Snapshot.PlanAt(rel)
	if p == nil || !p.Lane.Ready() {
		if v.Snapshot.PlanAt(string(model.RelOf(model.InProgress, model.Rel(rel).Name()))) != nil {
			return claims.Held{}, fmt.Errorf("%s: already claimed: %w", rel, claims.ErrLost)
		}
		return claims.Held{}, fmt.Errorf("%s: not a ready plan: %w", rel, claims.ErrLost)
	}
	if r := v.Lease(p.Slug); r != nil {
		return claims.Held{}, fmt.Errorf("%s: leased by %s: %w", rel, r.AgentID, claims.ErrLost)
	}
	return b.create(ctx, p.Slug, rel, h, ttl, 1, 0)
}

// create puts slug's key for h if its create revision is still was (0:
// create-only; a corrupt key's revision for a takeover of it).
func (b *Backend) create(ctx context.Context, slug, rel string, h claims.Holder, ttl time.Duration, epoch, was int64) (claims.Held, error) {
	began := time.Now()
	s, err := b.current()
	if err != nil {
		return claims.Held{}, err
	}
	var id clientv3.LeaseID
	if s != nil {
		id, ttl = s.id, s.ttl
	} else if id, err = b.grant(ctx, ttl); err != nil {
		return claims.Held{}, err
	}
	lease := newLease(rel, h, ttl, epoch)
	val := model.EncodeLease(lease)
	key := b.key(slug)
	cond := clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
	if was != 0 {
		cond = clientv3.Compare(clientv3.ModRevision(key), "=", was)
	}
	tctx, cancel := b.op(ctx)
	resp, err := b.cli.Txn(tctx).If(cond).Then(clientv3.OpPut(key, string(val), clientv3.WithLease(id))).Commit()
	cancel()
	var rev int64
	switch {
	case err != nil:
		// An unclear outcome: the key itself says whether the put landed.
		if rev, err = b.landed(ctx, key, val); err != nil {
			b.drop(s, id, ttl)
			return claims.Held{}, fmt.Errorf("%s: %w", rel, err)
		}
	case !resp.Succeeded:
		b.drop(s, id, ttl)
		return claims.Held{}, fmt.Errorf("%s: claimed by another worker first: %w", rel, claims.ErrLost)
	default:
		rev = resp.Header.Revision
	}
	lease.Token, lease.Backend = strconv.FormatInt(rev, 10), backendName
	return claims.Held{Slug: slug, Rel: rel, Lease: lease, Version: lease.Token, Renewed: began}, nil
}

// landed reads key after a put whose answer was lost: ours when it holds
// exactly val (whose nonce no one else wrote), and then its revision.
func (b *Backend) landed(ctx context.Context, key string, val []byte) (int64, error) {
	gctx, cancel := b.op(ctx)
	defer cancel()
	g, err := b.cli.Get(gctx, key)
	if err != nil {
		return 0, b.unavailable(err)
	}
	if len(g.Kvs) == 1 && bytes.Equal(g.Kvs[0].Value, val) {
		return g.Kvs[0].ModRevision, nil
	}
	return 0, fmt.Errorf("claimed by another worker first: %w", claims.ErrLost)
}

// spareAge is how long an etcd lease granted for a claim that lost its
// race may wait for this process's next claim: a lost race costs one
// transaction, not a grant and a revoke too, and the lease the next claim
// rides has lost at most this much of its TTL.
const spareAge = time.Second

// spare is a claim-only etcd lease no key rides yet.
type spare struct {
	id      clientv3.LeaseID
	ttl     int64
	granted time.Time
}

// grant is a fresh claim-only etcd lease of ttl: the spare one when it is
// young and of that TTL, else a new grant.
func (b *Backend) grant(ctx context.Context, ttl time.Duration) (clientv3.LeaseID, error) {
	secs := ttlSeconds(ttl)
	b.mu.Lock()
	sp := b.spare
	b.spare = nil
	b.mu.Unlock()
	if sp != nil {
		if sp.ttl == secs && time.Since(sp.granted) < spareAge {
			return sp.id, nil
		}
		b.revoke(sp.id)
	}
	gctx, cancel := b.op(ctx)
	g, err := b.cli.Grant(gctx, secs)
	cancel()
	if err != nil {
		return 0, b.unavailable(err)
	}
	return g.ID, nil
}

// drop keeps a claim-only lease granted for a claim that did not land as
// the spare for the next claim (revoking the one it replaces).
func (b *Backend) drop(s *session, id clientv3.LeaseID, ttl time.Duration) {
	if s != nil {
		return
	}
	b.mu.Lock()
	old := b.spare
	b.spare = &spare{id: id, ttl: ttlSeconds(ttl), granted: time.Now()}
	b.mu.Unlock()
	if old != nil {
		b.revoke(old.id)
	}
}

// revoke ends an etcd lease and every key riding it, best effort.
func (b *Backend) revoke(id clientv3.LeaseID) {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	_, _ = b.cli.Revoke(ctx, id)
	cancel()
}

// version parses held's compare-and-swap value.
func version(held claims.Held) (int64, error) {
	v, err := strconv.ParseInt(held.Version, 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%s: %q is not an etcd revision: %w", held.Slug, held.Version, claims.ErrNotHolder)
	}
	return v, nil
}

// Renew is the heartbeat: once the key's mod revision is still held's,
// one keep-alive of the etcd lease it rides. ErrLost when the key changed,
// is gone, or its lease expired.
func (b *Backend) Renew(ctx context.Context, held claims.Held, ttl time.Duration) (claims.Held, error) {
	if err := claims.ValidTTL(ttl); err != nil {
		return claims.Held{}, err
	}
	ver, err := version(held)
	if err != nil {
		return claims.Held{}, err
	}
	began := time.Now()
	key := b.key(held.Slug)
	tctx, cancel := b.op(ctx)
	resp, err := b.cli.Txn(tctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", ver)).Then(clientv3.OpGet(key)).Commit()
	cancel()
	if err != nil {
		return claims.Held{}, b.unavailable(err)
	}
	if !resp.Succeeded || len(resp.Responses) == 0 || len(resp.Responses[0].GetResponseRange().Kvs) == 0 {
		return claims.Held{}, fmt.Errorf("%s: lease lost (its key changed or is gone): %w", held.Slug, claims.ErrLost)
	}
	id := clientv3.LeaseID(resp.Responses[0].GetResponseRange().Kvs[0].Lease)
	if id == 0 {
		return claims.Held{}, fmt.Errorf("%s: its key rides no etcd lease; nothing to renew: %w", held.Slug, claims.ErrLost)
	}
	kctx, cancel := b.op(ctx)
	ka, err := b.cli.KeepAliveOnce(kctx, id)
	cancel()
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return claims.Held{}, fmt.Errorf("%s: lease lost (expired): %w", held.Slug, claims.ErrLost)
	}
	if err != nil {
		return claims.Held{}, b.unavailable(err)
	}
	next := held
	now := float64(began.UnixNano()) / 1e9
	next.Lease.TTL = float64(ka.TTL)
	next.Lease.ExpiresAt = now + float64(ka.TTL)
	next.Renewed = began
	return next, nil
}

// TakeOver is recover. etcd expires leases itself, so a key that still
// exists on a lease is live (*claims.TooEarlyError, Need its lease's time
// to live), and an expired one is gone: the takeover is then a plain
// create-only claim of the plan, of which one racer wins. A key that rides
// no lease (written by hand) never expires, so it is taken by CAS on its
// revision.
func (b *Backend) TakeOver(ctx context.Context, v *claims.View, slug string, h claims.Holder, ttl time.Duration) (claims.Held, error) {
	if err := claims.ValidTTL(ttl); err != nil {
		return claims.Held{}, err
	}
	r := v.Lease(slug)
	if r == nil {
		return claims.Held{}, fmt.Errorf("%s: %w", slug, claims.ErrNoLease)
	}
	rel := r.Origin
	if rel == "" {
		rel = r.Plan
	}
	gctx, cancel := b.op(ctx)
	g, err := b.cli.Get(gctx, b.key(slug))
	cancel()
	if err != nil {
		return claims.Held{}, b.unavailable(err)
	}
	if len(g.Kvs) == 0 {
		return b.create(ctx, slug, rel, h, ttl, r.Epoch+1, 0)
	}
	kv := g.Kvs[0]
	if strconv.FormatInt(kv.ModRevision, 10) != r.Version {
		// Not the lease v saw: another worker renewed it or took it
		// over first.
		return claims.Held{}, fmt.Errorf("%s: its lease changed since it was read: %w", slug, claims.ErrLost)
	}
	if kv.Lease != 0 {
		return claims.Held{}, &claims.TooEarlyError{Slug: slug, Need: b.timeToLive(ctx, clientv3.LeaseID(kv.Lease))}
	}
	if rel == "" {
		return claims.Held{}, fmt.Errorf("%s: its key names no plan; delete %s by hand", slug, b.key(slug))
	}
	return b.create(ctx, slug, rel, h, ttl, r.Epoch+1, kv.ModRevision)
}

// timeToLive is how long lease id still runs (0 when unknown or gone); a
// lease in its last second says one second, so a too-early takeover
// always names a wait.
func (b *Backend) timeToLive(ctx context.Context, id clientv3.LeaseID) time.Duration {
	tctx, cancel := b.op(ctx)
	defer cancel()
	t, err := b.cli.TimeToLive(tctx, id)
	if err != nil || t.TTL < 0 {
		return 0
	}
	return time.Duration(max(t.TTL, 1)) * time.Second
}

// Release deletes held's key, CAS on its mod revision; the plan stays in
// its ready lane, free again. A claim-only lease goes with it.
func (b *Backend) Release(ctx context.Context, held claims.Held, reason string) error {
	if err := b.remove(ctx, held); err != nil {
		return fmt.Errorf("%s: cannot release: %w", held.Slug, err)
	}
	return nil
}

// remove deletes held's key if its mod revision is still held's, and then
// revokes the etcd lease it rode unless that is the worker session.
func (b *Backend) remove(ctx context.Context, held claims.Held) error {
	ver, err := version(held)
	if err != nil {
		return err
	}
	key := b.key(held.Slug)
	tctx, cancel := b.op(ctx)
	resp, err := b.cli.Txn(tctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", ver)).
		Then(clientv3.OpGet(key), clientv3.OpDelete(key)).Commit()
	cancel()
	if err != nil {
		return b.unavailable(err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("the lease changed or is gone since revision %d: %w", ver, claims.ErrLost)
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	s, _ := b.current()
	if len(kvs) == 1 && kvs[0].Lease != 0 && (s == nil || clientv3.LeaseID(kvs[0].Lease) != s.id) {
		b.revoke(clientv3.LeaseID(kvs[0].Lease))
	}
	return nil
}

// Complete is MoveHeld by the holder itself: the key is checked first, so
// a holder that lost its lease never moves the plan; were the lease lost
// between the move and the delete, the plan is done all the same and the
// other key sits on a plan no longer ready, blocking nothing.
func (b *Backend) Complete(ctx context.Context, held claims.Held, to model.Lane) (string, error) {
	return b.MoveHeld(ctx, held, to, held.Lease.AgentID, "")
}

// MovePlan moves rel to lane on the integration branch for a verb that
// holds no lease.
func (b *Backend) MovePlan(ctx context.Context, rel string, to model.Lane, by, why string) (string, error) {
	if b.lanes == nil {
		return "", b.noRemote(rel)
	}
	return b.lanes.Move(ctx, rel, to, by, why)
}

func (b *Backend) noRemote(rel string) error {
	return fmt.Errorf("%s: plans move on the project's git remote, and this checkout has none (claims: {remote: …}): %w", rel, claims.ErrUnavailable)
}

// PushBranch pushes u to the project's git remote once held's key is still
// at held's mod revision and the etcd lease it rides still has time to
// live; the push is given no longer than that time.
//
// The lease lives in etcd and the branch in git, so the check and the push
// cannot be one step: a holder paused (SIGSTOP, swap, a stalled network)
// after the check, past its lease's expiry and a takeover, may still have
// its push land. That pause is the remaining window. The push moves the
// branch only from u.Old, what this holder last pushed or started from, so
// in that window nothing is overwritten either way: if the new holder
// pushed first, the old one's push is refused; if the old one's lands
// first, the new holder's next push is refused (ErrBranchMoved) and its
// driver reports it, never forcing it.
func (b *Backend) PushBranch(ctx context.Context, held claims.Held, u claims.BranchUpdate) (claims.Held, error) {
	if b.lanes == nil {
		return claims.Held{}, b.noRemote(held.Rel)
	}
	ver, err := version(held)
	if err != nil {
		return claims.Held{}, err
	}
	gctx, cancel := b.op(ctx)
	g, err := b.cli.Get(gctx, b.key(held.Slug))
	cancel()
	if err != nil {
		return claims.Held{}, b.unavailable(err)
	}
	if len(g.Kvs) == 0 || g.Kvs[0].ModRevision != ver {
		return claims.Held{}, fmt.Errorf("%s: lease lost (its key changed or is gone); %s not pushed: %w", held.Slug, u.Ref, claims.ErrLost)
	}
	left := b.timeout
	if id := clientv3.LeaseID(g.Kvs[0].Lease); id != 0 {
		if left = b.timeToLive(ctx, id); left <= 0 {
			return claims.Held{}, fmt.Errorf("%s: lease lost (expired); %s not pushed: %w", held.Slug, u.Ref, claims.ErrLost)
		}
	}
	pctx, cancel := context.WithTimeout(ctx, left)
	defer cancel()
	if err := b.lanes.UpdateBranch(pctx, u); err != nil {
		return claims.Held{}, fmt.Errorf("%s: %w", held.Slug, err)
	}
	return held, nil
}
