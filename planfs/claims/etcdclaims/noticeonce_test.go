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
			taken, err := b.ClaimNotices(ctx, keys)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, k := range keys {
				if !taken[k] {
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
	taken, err := b.ClaimNotices(ctx, []string{"k1", "k9"})
	if err != nil || !taken["k1"] || taken["k9"] {
		t.Errorf("a later claim: %v %v", taken, err)
	}
	g, err := b.cli.Get(ctx, b.root()+"notices/k9")
	if err != nil || len(g.Kvs) != 1 || g.Kvs[0].Lease == 0 {
		t.Errorf("k9's key: %v %v", g, err)
	}
}
