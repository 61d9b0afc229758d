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

	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// TestNoticeClaimedOnceAcrossClones: clones racing to claim the same
// notice keys each get a disjoint share, one claim per key in all; a key
// claimed is taken for every later claim; a bad key is refused.
func TestNoticeClaimedOnceAcrossClones(t *testing.T) {
	t.Parallel()
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
			got, err := b.ClaimNotices(ctx, unclaimed(keys...))
			if err != nil {
				t.Errorf("clone %d: %v", i, err)
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
			t.Errorf("%s claimed by %d clones, want 1 (%v)", k, won[k], won)
		}
	}
	late, _ := cloneOf(t, url)
	got, err := late.ClaimNotices(ctx, unclaimed("k2", "k5"))
	if err != nil || got["k2"].Mine || got["k2"].Rev == "" || !got["k5"].Mine {
		t.Errorf("a later claim of k2 (claimed) and k5 (new): %v %v", got, err)
	}
	if _, err := late.ClaimNotices(ctx, unclaimed("../x")); err == nil || !strings.Contains(err.Error(), `notice key "../x"`) {
		t.Errorf("a bad key: %v", err)
	}
}

// TestOldNoticeRefsArePruned: a process's first claim deletes the notice
// refs older than claims.NoticeKeep, so the key can be claimed again;
// newer ones stay.
func TestOldNoticeRefsArePruned(t *testing.T) {
	t.Parallel()
	url := remoteWith(t, readyPlans(1))
	ctx := context.Background()
	a, dir := cloneOf(t, url)
	got, err := a.ClaimNotices(ctx, unclaimed("recent"))
	if err != nil || !got["recent"].Mine {
		t.Fatalf("claim: %v %v", got, err)
	}
	if err := a.ConfirmNotices(ctx, map[string]string{"recent": got["recent"].Rev}); err != nil {
		t.Fatal(err)
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
	oldCommit := strings.TrimSpace(string(out))
	gitIn(t, dir, "push", "-q", "origin", oldCommit+":"+NoticeRefs+"ancient", oldCommit+":"+SentRefs+"ancient")
	b, _ := cloneOf(t, url)
	got, err = b.ClaimNotices(ctx, unclaimed("ancient", "recent"))
	if err != nil || !got["ancient"].Mine || got["ancient"].Sent || got["recent"].Mine || !got["recent"].Sent {
		t.Errorf("after the prune: ancient should be claimable again, recent still taken and sent: %v %v", got, err)
	}
}

// TestSquattedNoticeIsTakenOverOnce: a claim never confirmed can be
// taken over by naming it, by one racer; a confirmed claim reads as sent;
// a confirmation already there is left as it is.
func TestSquattedNoticeIsTakenOverOnce(t *testing.T) {
	t.Parallel()
	url := remoteWith(t, readyPlans(1))
	ctx := context.Background()
	squatter, _ := cloneOf(t, url)
	sq, err := squatter.ClaimNotices(ctx, unclaimed("k"))
	if err != nil || !sq["k"].Mine {
		t.Fatalf("squat: %v %v", sq, err)
	}
	seen := sq["k"].Rev
	var mu sync.Mutex
	var winners []string
	var wg sync.WaitGroup
	for i := range 4 {
		b, _ := cloneOf(t, url)
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := b.ClaimNotices(ctx, map[string]string{"k": seen})
			if err != nil {
				t.Errorf("clone %d: %v", i, err)
				return
			}
			if c := got["k"]; c.Mine {
				mu.Lock()
				winners = append(winners, c.Rev)
				mu.Unlock()
				if err := b.ConfirmNotices(ctx, map[string]string{"k": c.Rev}); err != nil {
					t.Error(err)
				}
			} else if c.Rev == seen || c.Rev == "" {
				t.Errorf("clone %d lost the take-over to nothing: %+v", i, c)
			}
		}()
	}
	wg.Wait()
	if len(winners) != 1 {
		t.Fatalf("%d clones took the squatted claim over, want 1", len(winners))
	}
	reader, _ := cloneOf(t, url)
	have, err := reader.NoticeClaims(ctx, []string{"k", "none"})
	if err != nil || have["k"] != (claims.NoticeClaim{Rev: winners[0], Sent: true}) || len(have) != 1 {
		t.Errorf("read after the take-over: %+v %v", have, err)
	}
	if err := squatter.ConfirmNotices(ctx, map[string]string{"k": seen}); err != nil {
		t.Errorf("a second confirmation: %v", err)
	}
}

func unclaimed(keys ...string) map[string]string {
	want := map[string]string{}
	for _, k := range keys {
		want[k] = ""
	}
	return want
}
