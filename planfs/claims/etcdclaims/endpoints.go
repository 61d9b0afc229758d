//go:build etcd

package etcdclaims

import (
	"context"
	"fmt"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/planfs/claims/gitclaims"
)

var _ claims.EndpointBoard = (*Backend)(nil)

// endpointKey is name's key: under no lease, so a record outlives the
// worker that wrote it.
func (b *Backend) endpointKey(name string) string {
	return b.root() + "endpoints/" + gitclaims.EndpointRef(name)[len(gitclaims.EndpointRefs):]
}

// PublishEndpoint puts data as name's record; nil data deletes it.
func (b *Backend) PublishEndpoint(ctx context.Context, name string, data []byte) error {
	if len(data) > claims.MaxEndpointRecord {
		return fmt.Errorf("endpoint record %s: larger than %d bytes", name, claims.MaxEndpointRecord)
	}
	tctx, cancel := b.op(ctx)
	defer cancel()
	var err error
	if data == nil {
		_, err = b.cli.Delete(tctx, b.endpointKey(name))
	} else {
		_, err = b.cli.Put(tctx, b.endpointKey(name), string(data))
	}
	if err != nil {
		return b.unavailable(err)
	}
	return nil
}

// EndpointRecord reads name's record, nil when there is none.
func (b *Backend) EndpointRecord(ctx context.Context, name string) ([]byte, error) {
	tctx, cancel := b.op(ctx)
	defer cancel()
	resp, err := b.cli.Get(tctx, b.endpointKey(name))
	if err != nil {
		return nil, b.unavailable(err)
	}
	for _, kv := range resp.Kvs {
		if len(kv.Value) > claims.MaxEndpointRecord {
			return nil, fmt.Errorf("endpoint record %s: larger than %d bytes", name, claims.MaxEndpointRecord)
		}
		return kv.Value, nil
	}
	return nil, nil
}
