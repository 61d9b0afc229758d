//go:build etcd

package etcdclaims

import (
	"context"
	"testing"
)

// An endpoint's record put by one client is read by another, outlives
// both sessions, and is removed.
func TestEndpointRecordsOnEtcd(t *testing.T) {
	dir, id := project(t, 1)
	ctx := context.Background()
	a, b := open(t, dir, id), open(t, dir, id)
	if got, err := b.EndpointRecord(ctx, "cc"); got != nil || err != nil {
		t.Fatalf("no record yet: %q %v", got, err)
	}
	if err := a.PublishEndpoint(ctx, "cc", []byte(`{"state":"shut"}`)); err != nil {
		t.Fatal(err)
	}
	if got, err := b.EndpointRecord(ctx, "cc"); string(got) != `{"state":"shut"}` || err != nil {
		t.Errorf("read %q %v", got, err)
	}
	if err := b.PublishEndpoint(ctx, "cc", nil); err != nil {
		t.Fatal(err)
	}
	if got, err := a.EndpointRecord(ctx, "cc"); got != nil || err != nil {
		t.Errorf("after removal: %q %v", got, err)
	}
}
