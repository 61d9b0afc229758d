//go:build etcd

package etcdclaims

import (
	"context"
	"fmt"
	"os"

	clientv3 "go.etcd.io/etcd/client/v3"

	"fleetwatch/planfs/claims"
)

var _ claims.NoticeLedger = (*Backend)(nil)

// ClaimNotices creates /fleetwatch/<project id>/notices/<key> for each key,
// each in a transaction that puts it only if it has never been, on one
// etcd lease of claims.NoticeKeep granted for this claim: etcd forgets
// them by itself.
func (b *Backend) ClaimNotices(ctx context.Context, keys []string) (map[string]bool, error) {
	if len(keys) > claims.MaxNoticeKeys {
		return nil, fmt.Errorf("%d notice keys in one claim, more than %d", len(keys), claims.MaxNoticeKeys)
	}
	taken := map[string]bool{}
	if len(keys) == 0 {
		return taken, nil
	}
	gctx, cancel := b.op(ctx)
	lease, err := b.cli.Grant(gctx, int64(claims.NoticeKeep.Seconds()))
	cancel()
	if err != nil {
		return nil, b.unavailable(err)
	}
	host, _ := os.Hostname()
	for _, k := range keys {
		key := b.root() + "notices/" + k
		tctx, cancel := b.op(ctx)
		resp, err := b.cli.Txn(tctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, host, clientv3.WithLease(lease.ID))).Commit()
		cancel()
		if err != nil {
			return nil, b.unavailable(err)
		}
		if !resp.Succeeded {
			taken[k] = true
		}
	}
	return taken, nil
}
