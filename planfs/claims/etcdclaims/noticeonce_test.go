//go:build etcd

package etcdclaims

import (
	"context"
	"sync"
	"testing"
)

// TestNoticeClaimedOnceOnEtcd: clients racing to claim the same notice
// keys each get a disjoint share; a key claimed is taken for every later
// claim, and lives on a lease (etcd forgets it by itself).
func TestNoticeClaimedOnceOnEtcd(t *testing.T) {
	dir, id := project(t, 1)
	ctx := context.Background()
	keys := []string{"k1", "k2", "k3"}
	var mu sync.Mutex
	won := map[string]int{}
	var wg sync.WaitGroup
	for range 6 {
		b := open(t, dir, id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := b.ClaimNotices(ctx, map[string]string{"k1": "", "k2": "", "k3": ""})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, k := range keys {
				if got[k].Mine {
					won[k]++
				}
			}
		}()
	}
	wg.Wait()
	for _, k := range keys {
		if won[k] != 1 {
			t.Errorf("%s claimed by %d clients, want 1 (%v)", k, won[k], won)
		}
	}
	b := open(t, dir, id)
	got, err := b.ClaimNotices(ctx, map[string]string{"k1": "", "k9": ""})
	if err != nil || got["k1"].Mine || !got["k9"].Mine {
		t.Errorf("a later claim: %v %v", got, err)
	}
	// An unconfirmed claim is taken over by naming it, once; then
	// confirmed, it reads as sent.
	taken, err := b.ClaimNotices(ctx, map[string]string{"k1": got["k1"].Rev})
	if err != nil || !taken["k1"].Mine {
		t.Fatalf("take-over: %v %v", taken, err)
	}
	if again, err := open(t, dir, id).ClaimNotices(ctx, map[string]string{"k1": got["k1"].Rev}); err != nil || again["k1"].Mine {
		t.Errorf("a second take-over of the same claim: %v %v", again, err)
	}
	if err := b.ConfirmNotices(ctx, map[string]string{"k1": taken["k1"].Rev}); err != nil {
		t.Fatal(err)
	}
	if have, err := b.NoticeClaims(ctx, []string{"k1", "k8"}); err != nil || !have["k1"].Sent || len(have) != 1 {
		t.Errorf("read after the confirmation: %v %v", have, err)
	}
	g, err := b.cli.Get(ctx, b.root()+"notices/k9")
	if err != nil || len(g.Kvs) != 1 || g.Kvs[0].Lease == 0 {
		t.Errorf("k9's key: %v %v", g, err)
	}
}
