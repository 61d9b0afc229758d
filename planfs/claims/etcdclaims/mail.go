//go:build etcd

package etcdclaims

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/planfs/claims/gitclaims"
)

// A worker's pending mail is one key, /fleetwatch/<project id>/mail/<host>/
// <agent>, holding the list (claims.EncodeMail) on the worker's own lease,
// so it goes when the worker does. A Send rewrites it while the worker's
// record and the list are as it read them; a publish reads it in its own
// transaction and deletes it while it is as read (claims/mail.go says what
// delivery promises).

func (b *Backend) mailKey(host, agent string) string {
	return b.root() + "mail/" + gitclaims.WorkerName(host, agent)
}

// sendTries bounds a Send's compare-and-swap attempts: each lost one is a
// heartbeat or another message landing between its read and its write.
const sendTries = 8

// Send adds m to host's agent's pending list for its current run.
func (b *Backend) Send(ctx context.Context, host, agent string, m claims.Message) error {
	m, err := claims.CheckMail(host, agent, m)
	if err != nil {
		return err
	}
	key, mail := b.workerKey(host, agent), b.mailKey(host, agent)
	wait := 20 * time.Millisecond
	for try := 0; try < sendTries; try++ {
		done, err := b.sendOnce(ctx, host, agent, key, mail, m)
		if done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait/2 + rand.N(wait)):
		}
		wait = min(2*wait, time.Second)
	}
	return fmt.Errorf("%s on %s: its record kept changing; ask again: %w", agent, host, claims.ErrLost)
}

// sendOnce reads the worker's record and list in one transaction and
// writes the list with m while both are as read; done is false when
// either changed meanwhile.
func (b *Backend) sendOnce(ctx context.Context, host, agent, key, mail string, m claims.Message) (done bool, err error) {
	gctx, cancel := b.op(ctx)
	g, err := b.cli.Txn(gctx).Then(clientv3.OpGet(key), clientv3.OpGet(mail)).Commit()
	cancel()
	if err != nil {
		return false, b.unavailable(err)
	}
	recs, boxes := g.Responses[0].GetResponseRange().Kvs, g.Responses[1].GetResponseRange().Kvs
	if len(recs) == 0 {
		return false, fmt.Errorf("%s on %s: %w", agent, host, claims.ErrNoWorker)
	}
	kv := recs[0]
	p := recordAt(gitclaims.WorkerName(host, agent), kv.Value)
	switch {
	case p.Problem != "":
		return false, fmt.Errorf("%s on %s: %s", agent, host, p.Problem)
	case p.State == claims.WorkerExited:
		return false, fmt.Errorf("%s on %s: %w", agent, host, claims.ErrWorkerDone)
	}
	var box []claims.Message
	var boxRev int64 // 0: no list, as etcd compares a missing key
	if len(boxes) > 0 {
		// A list that cannot be read was not written by a Send, and its
		// driver cannot read it either: the new list replaces it.
		box, _ = claims.DecodeMail("etcd key "+mail, boxes[0].Value)
		boxRev = boxes[0].ModRevision
	}
	m.Run = p.Run
	box, added, err := claims.AddMail(box, m)
	if err != nil || !added {
		if err != nil {
			err = fmt.Errorf("%s on %s: %w", agent, host, err)
		}
		return true, err
	}
	tctx, cancel := b.op(ctx)
	resp, err := b.cli.Txn(tctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", kv.ModRevision),
		clientv3.Compare(clientv3.ModRevision(mail), "=", boxRev)).
		Then(clientv3.OpPut(mail, string(claims.EncodeMail(box)), clientv3.WithLease(clientv3.LeaseID(kv.Lease)))).Commit()
	cancel()
	if err != nil {
		return false, b.unavailable(err)
	}
	return resp.Succeeded, nil
}

// takeMail deletes the mail key while it is at rev, the list a publish
// read; when a Send came since, the list stays, and the next publish reads
// it again with the messages already handed over (the driver drops those).
// A failure leaves it for the next publish too.
func (b *Backend) takeMail(ctx context.Context, mail string, rev int64) {
	tctx, cancel := b.op(ctx)
	defer cancel()
	_, _ = b.cli.Txn(tctx).If(clientv3.Compare(clientv3.ModRevision(mail), "=", rev)).Then(clientv3.OpDelete(mail)).Commit()
}

var _ claims.MailWatcher = (*Backend)(nil)

// MailChanges says when host's agent's mail or stop key is written: a
// watch on each, so a message reaches its driver's publish in about one
// round trip. A broken watch is made again after a second, saying so (a
// write may have come meanwhile).
func (b *Backend) MailChanges(ctx context.Context, host, agent string) <-chan struct{} {
	out := make(chan struct{}, 1)
	notify := wordOn(out)
	var wg sync.WaitGroup
	for _, key := range []string{b.mailKey(host, agent), b.stopKey(host, agent)} {
		// Puts only: a publish taking the mail away is no news.
		wg.Go(func() { b.watchLoop(ctx, key, notify, clientv3.WithFilterDelete()) })
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	return out
}
