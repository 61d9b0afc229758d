//go:build etcd

package etcdclaims

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// session is one etcd lease a `--run` worker keeps alive while it runs:
// every claim it makes rides it, so they all vanish when the worker dies
// and its keep-alives stop.
type session struct {
	id     clientv3.LeaseID
	ttl    time.Duration
	cancel context.CancelFunc
	lost   atomic.Bool // the keep-alive stream ended before stop
	done   chan struct{}
}

// StartSession grants the worker's session lease for ttl and keeps it
// alive until ctx ends or Close; later claims ride it.
func (b *Backend) StartSession(ctx context.Context, ttl time.Duration) error {
	if err := claims.ValidTTL(ttl); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.session != nil {
		return fmt.Errorf("etcd: a session is already running")
	}
	gctx, cancel := b.op(ctx)
	g, err := b.cli.Grant(gctx, ttlSeconds(ttl))
	cancel()
	if err != nil {
		return b.unavailable(err)
	}
	kctx, kcancel := context.WithCancel(ctx)
	ch, err := b.cli.KeepAlive(kctx, g.ID)
	if err != nil {
		kcancel()
		return b.unavailable(err)
	}
	s := &session{id: g.ID, ttl: time.Duration(g.TTL) * time.Second, cancel: kcancel, done: make(chan struct{})}
	go s.drain(ch, kctx)
	b.session = s
	return nil
}

// drain takes the keep-alive answers; the channel closes when the lease is
// gone or kctx ends.
func (s *session) drain(ch <-chan *clientv3.LeaseKeepAliveResponse, kctx context.Context) {
	defer close(s.done)
	for range ch {
	}
	if kctx.Err() == nil {
		s.lost.Store(true)
	}
}

func (s *session) stop() {
	s.cancel()
	<-s.done
}

// current is the live session, or nil; a session whose keep-alives ended is
// an error: its claims are gone.
func (b *Backend) current() (*session, error) {
	b.mu.Lock()
	s := b.session
	b.mu.Unlock()
	if s == nil {
		return nil, nil
	}
	if s.lost.Load() {
		return nil, fmt.Errorf("etcd %s: the worker session's lease %x ended: %w", b.endpoints, int64(s.id), claims.ErrUnavailable)
	}
	select {
	case <-s.done:
		return nil, fmt.Errorf("etcd %s: the worker session ended: %w", b.endpoints, claims.ErrUnavailable)
	default:
	}
	return s, nil
}

// ttlSeconds rounds ttl up to whole seconds, as etcd grants leases.
func ttlSeconds(ttl time.Duration) int64 {
	return int64((ttl + time.Second - 1) / time.Second)
}
