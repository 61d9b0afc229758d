package gitclaims

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"fleetwatch/planfs/claims"
)

// TestNoticeClaimedOnceAcrossClones: clones racing to claim the same
// notice keys each get a disjoint share, one claim per key in all; a key
// claimed is taken for every later claim; a bad key is refused.
func TestNoticeClaimedOnceAcrossClones(t *testing.T) {
	url := remoteWith(t, readyPlans(1))
	ctx := context.Background()
	const clones = 6
	keys := []string{"k1", "k2", "k3", "k4"}
	var mu sync.Mutex
	won := map[string]int{}
	var wg sync.WaitGroup
	for i := range clones {
		b, _ := cloneOf(t, url)
		wg.Add(1)
		go func() {
			defer wg.Done()
			taken, err := b.ClaimNotices(ctx, keys)
			if err != nil {
				t.Errorf("clone %d: %v", i, err)
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
			t.Errorf("%s claimed by %d clones, want 1 (%v)", k, won[k], won)
		}
	}
	late, _ := cloneOf(t, url)
	taken, err := late.ClaimNotices(ctx, []string{"k2", "k5"})
	if err != nil || !taken["k2"] || taken["k5"] {
		t.Errorf("a later claim of k2 (claimed) and k5 (new): %v %v", taken, err)
	}
	if _, err := late.ClaimNotices(ctx, []string{"../x"}); err == nil || !strings.Contains(err.Error(), `notice key "../x"`) {
		t.Errorf("a bad key: %v", err)
	}
}

// TestOldNoticeRefsArePruned: a process's first claim deletes the notice
// refs older than claims.NoticeKeep, so the key can be claimed again;
// newer ones stay.
func TestOldNoticeRefsArePruned(t *testing.T) {
	url := remoteWith(t, readyPlans(1))
	ctx := context.Background()
	a, dir := cloneOf(t, url)
	if taken, err := a.ClaimNotices(ctx, []string{"recent"}); err != nil || len(taken) > 0 {
		t.Fatalf("claim: %v %v", taken, err)
	}
	old := time.Now().Add(-claims.NoticeKeep - 24*time.Hour).Unix()
	tree := gitIn(t, dir, "hash-object", "-w", "-t", "tree", "--stdin")
	cmd := exec.Command("git", "commit-tree", tree, "-m", "old notice")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
		fmt.Sprintf("GIT_COMMITTER_DATE=%d +0000", old), fmt.Sprintf("GIT_AUTHOR_DATE=%d +0000", old))
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "push", "-q", "origin", strings.TrimSpace(string(out))+":"+NoticeRefs+"ancient")
	b, _ := cloneOf(t, url)
	taken, err := b.ClaimNotices(ctx, []string{"ancient", "recent"})
	if err != nil || taken["ancient"] || !taken["recent"] {
		t.Errorf("after the prune: ancient should be claimable again, recent still taken: %v %v", taken, err)
	}
}
