//go:build etcd

package etcdclaims

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

var _ claims.NoticeLedger = (*Backend)(nil)

// ClaimNotices puts /fleetwatch/<project id>/notices/<key> for each key,
// each in a transaction: only if it never was when want names no claim,
// only while it is at that claim's revision for a take-over. Each is on
// one etcd lease of claims.NoticeKeep granted for this claim: etcd forgets
// them by itself. A claim's Rev is its key's mod revision.
func (b *Backend) ClaimNotices(ctx context.Context, want map[string]string) (map[string]claims.NoticeClaim, error) {
	if len(want) > claims.MaxNoticeKeys {
		return nil, fmt.Errorf("%d notice keys in one claim, more than %d", len(want), claims.MaxNoticeKeys)
	}
	got := map[string]claims.NoticeClaim{}
	if len(want) == 0 {
		return got, nil
	}
	lease, err := b.noticeLease(ctx)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	value := fmt.Sprintf("claimed on %s by pid %d", host, os.Getpid())
	for k, rev := range want {
		key := b.root() + "notices/" + k
		cond := clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
		if rev != "" {
			n, err := strconv.ParseInt(rev, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("notice %s: claim %q is no etcd revision", k, rev)
			}
			cond = clientv3.Compare(clientv3.ModRevision(key), "=", n)
		}
		tctx, cancel := b.op(ctx)
		resp, err := b.cli.Txn(tctx).If(cond).
			Then(clientv3.OpPut(key, value, clientv3.WithLease(lease))).
			Else(clientv3.OpGet(key), clientv3.OpGet(b.root()+"notices-sent/"+k)).Commit()
		cancel()
		if err != nil {
			return nil, b.unavailable(err)
		}
		if resp.Succeeded {
			got[k] = claims.NoticeClaim{Rev: strconv.FormatInt(resp.Header.Revision, 10), Mine: true}
			continue
		}
		got[k] = noticeClaim(resp.Responses[0].GetResponseRange(), resp.Responses[1].GetResponseRange())
	}
	return got, nil
}

// ConfirmNotices puts /fleetwatch/<project id>/notices-sent/<key> for each
// key, if it never was, naming the claim that posted.
func (b *Backend) ConfirmNotices(ctx context.Context, mine map[string]string) error {
	if len(mine) == 0 {
		return nil
	}
	lease, err := b.noticeLease(ctx)
	if err != nil {
		return err
	}
	for k, rev := range mine {
		key := b.root() + "notices-sent/" + k
		tctx, cancel := b.op(ctx)
		_, err := b.cli.Txn(tctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, rev, clientv3.WithLease(lease))).Commit()
		cancel()
		if err != nil {
			return b.unavailable(err)
		}
	}
	return nil
}

// NoticeClaims reads each key's claim and confirmation, one transaction a key.
func (b *Backend) NoticeClaims(ctx context.Context, keys []string) (map[string]claims.NoticeClaim, error) {
	got := map[string]claims.NoticeClaim{}
	for _, k := range keys {
		tctx, cancel := b.op(ctx)
		resp, err := b.cli.Txn(tctx).Then(clientv3.OpGet(b.root()+"notices/"+k), clientv3.OpGet(b.root()+"notices-sent/"+k)).Commit()
		cancel()
		if err != nil {
			return nil, b.unavailable(err)
		}
		if c := noticeClaim(resp.Responses[0].GetResponseRange(), resp.Responses[1].GetResponseRange()); c.Rev != "" || c.Sent {
			got[k] = c
		}
	}
	return got, nil
}

// noticeClaim is a key's claim from the reads of its claim and its
// confirmation.
func noticeClaim(held, sent *etcdserverpb.RangeResponse) claims.NoticeClaim {
	var c claims.NoticeClaim
	if kvs := held.GetKvs(); len(kvs) > 0 {
		c.Rev = strconv.FormatInt(kvs[0].ModRevision, 10)
	}
	c.Sent = len(sent.GetKvs()) > 0
	return c
}

// noticeLease grants the lease of claims.NoticeKeep that one call's keys
// live on.
func (b *Backend) noticeLease(ctx context.Context) (clientv3.LeaseID, error) {
	gctx, cancel := b.op(ctx)
	defer cancel()
	lease, err := b.cli.Grant(gctx, int64(claims.NoticeKeep.Seconds()))
	if err != nil {
		return 0, b.unavailable(err)
	}
	return lease.ID, nil
}
