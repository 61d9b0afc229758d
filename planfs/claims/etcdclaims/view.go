//go:build etcd

package etcdclaims

import (
	"context"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// View reads every lease in one prefix Get, then the lanes (the remote
// integration branch, else the checkout). The leases come first because
// Complete moves the plan on git before it deletes the key: a key this Get
// no longer sees was dropped after its plan's move had landed, so the lanes
// read next show the plan moved, and a plan done on another machine is not
// claimed again.
func (b *Backend) View(ctx context.Context) (*claims.View, error) { return b.read(ctx, false) }

// Glance is View for picking: the keys without their values, each with the
// lease last decoded at its revision or an unknown holder (a leased plan
// is not picked whoever holds it); the transaction of a claim decides.
func (b *Backend) Glance(ctx context.Context) (*claims.View, error) { return b.read(ctx, true) }

func (b *Backend) read(ctx context.Context, keysOnly bool) (*claims.View, error) {
	v := &claims.View{ReadAt: time.Now()}
	opts := []clientv3.OpOption{clientv3.WithPrefix()}
	if keysOnly {
		opts = append(opts, clientv3.WithKeysOnly())
	}
	gctx, cancel := b.op(ctx)
	g, err := b.cli.Get(gctx, b.prefix, opts...)
	cancel()
	if err != nil {
		return nil, b.unavailable(err)
	}
	for _, kv := range g.Kvs {
		slug := strings.TrimPrefix(string(kv.Key), b.prefix)
		if slug == "" || strings.Contains(slug, "/") {
			continue
		}
		v.Leases = append(v.Leases, b.remoteOf(slug, kv.Value, keysOnly, kv.CreateRevision, kv.ModRevision))
	}
	if !keysOnly {
		b.pruneDecoded(v.Leases)
	}
	var snap *model.Snapshot
	if b.lanes != nil {
		snap, v.Tip, err = b.lanes.Read(ctx)
	} else {
		snap, err = b.tree.Scan()
	}
	if err != nil {
		return nil, err
	}
	v.Snapshot = claims.Overlay(snap, v.Leases, float64(v.ReadAt.UnixNano())/1e9)
	return v, nil
}

// remoteOf is one key as a lease: its token the key's create revision, its
// version the mod revision. Every key that exists is live, since the
// server deletes it when its lease expires; a value that cannot be read is
// a corrupt lease, which blocks its plan until it expires or is recovered.
// A key's value is decoded once per mod revision (decoded), not at every
// read: a view of a thousand leases decodes only what changed. A key read
// without its value (keysOnly) not decoded at its revision before is a
// lease whose holder is not known.
func (b *Backend) remoteOf(slug string, value []byte, keysOnly bool, created, modified int64) claims.Remote {
	b.mu.Lock()
	d, ok := b.decoded[slug]
	b.mu.Unlock()
	switch {
	case ok && d.rev == modified:
	case keysOnly:
		d.lease = model.Lease{AgentID: "(not read)", Token: strconv.FormatInt(created, 10), Backend: backendName}
	default:
		l, err := model.DecodeLease(value)
		if err != nil {
			l = model.Lease{Corrupt: "etcd key: " + err.Error()}
		}
		l.Token, l.Backend = strconv.FormatInt(created, 10), backendName
		d = decodedLease{rev: modified, lease: l}
		b.mu.Lock()
		b.decoded[slug] = d
		b.mu.Unlock()
	}
	return claims.Remote{Lease: d.lease, Slug: slug, Version: strconv.FormatInt(modified, 10), Live: true}
}

// decodedLease is a key's lease as decoded at mod revision rev.
type decodedLease struct {
	rev   int64
	lease model.Lease
}

// pruneDecoded forgets the decoded leases of keys a read no longer saw.
func (b *Backend) pruneDecoded(seen []claims.Remote) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.decoded) <= len(seen) {
		return
	}
	keep := make(map[string]bool, len(seen))
	for _, r := range seen {
		keep[r.Slug] = true
	}
	for slug := range b.decoded {
		if !keep[slug] {
			delete(b.decoded, slug)
		}
	}
}

// Changes receives after each change under the lease prefix, until ctx
// ends: an etcd Watch, so faces update without polling. Bursts coalesce
// into one receive; a watch the server cancels (compaction) is started
// again, with one receive for what it may have missed.
func (b *Backend) Changes(ctx context.Context) <-chan struct{} { return b.watch(ctx, b.prefix) }

// watch is Changes for any prefix (the leases', the workers').
func (b *Backend) watch(ctx context.Context, prefix string) <-chan struct{} {
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		b.watchLoop(ctx, prefix, wordOn(out), clientv3.WithPrefix())
	}()
	return out
}

// wordOn is a notify that leaves one word on out: one pending word covers
// any number of changes.
func wordOn(out chan struct{}) func() {
	return func() {
		select {
		case out <- struct{}{}:
		default:
		}
	}
}

// watchLoop calls notify after each change of key (opts say which keys
// and events), until ctx ends; a watch the server ends is made again
// after a second, with a notify for what it may have missed.
func (b *Backend) watchLoop(ctx context.Context, key string, notify func(), opts ...clientv3.OpOption) {
	for ctx.Err() == nil {
		wctx, cancel := context.WithCancel(ctx)
		for resp := range b.cli.Watch(clientv3.WithRequireLeader(wctx), key, opts...) {
			if resp.Err() != nil {
				break
			}
			if len(resp.Events) > 0 {
				notify()
			}
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
			notify()
		}
	}
}
