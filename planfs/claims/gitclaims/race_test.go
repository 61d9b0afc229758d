package gitclaims

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// losses counts the lost races of raceClaims, for the benchmark.
var losses atomic.Int64

// raceClaims has n clones of url claim plans until none is left and
// returns who got each slug (more than one name is a double claim).
func raceClaims(t testing.TB, url string, clones int) map[string][]string {
	t.Helper()
	return race(t, clonesOf(t, url, clones))
}

// clonesOf is n clones of url, each with its backend.
func clonesOf(t testing.TB, url string, n int) []*Backend {
	t.Helper()
	backends := make([]*Backend, n)
	for i := range backends {
		backends[i], _ = cloneOf(t, url)
	}
	return backends
}

// race has each of backends claim plans until none is left and returns
// who got each slug.
func race(t testing.TB, backends []*Backend) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, b := range backends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agent := "agent-" + string(rune('a'+i))
			lost := 0
			for range 500 {
				v, err := b.Glance(ctx) // as work-once picks
				if err != nil {
					t.Error(err)
					return
				}
				rows := model.Decide(v.Snapshot, model.Worker{AgentID: agent, Tier: model.Mid}, model.Options{NoFitCheck: true, Now: float64(time.Now().Unix())})
				pick := claims.Next(model.Picks(rows, nil), agent, lost)
				if pick == nil {
					return
				}
				h, err := b.Claim(ctx, v, pick.Plan.Rel, claims.Holder{AgentID: agent}, time.Minute)
				if errors.Is(err, claims.ErrLost) {
					losses.Add(1)
					lost++
					continue
				}
				// A worker that has met a race expects more: it keeps spreading.
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got[h.Slug] = append(got[h.Slug], agent)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return got
}

func TestEightClonesRaceAndEachPlanIsClaimedOnce(t *testing.T) {
	t.Parallel()
	const plans = 24
	for _, over := range []string{"path", "git daemon"} {
		t.Run(over, func(t *testing.T) {
			bare := remoteWith(t, readyPlans(plans))
			url := bare
			if over == "git daemon" {
				url = gitDaemon(t, filepath.Dir(bare)) + filepath.Base(bare)
			}
			got := raceClaims(t, url, 8)
			if len(got) != plans {
				t.Errorf("%d plans claimed, want %d", len(got), plans)
			}
			for slug, who := range got {
				if len(who) != 1 {
					t.Errorf("%s claimed by %v", slug, who)
				}
			}
		})
	}
}

func TestRacingTakeoversOneWins(t *testing.T) {
	t.Parallel()
	bare := remoteWith(t, readyPlans(1))
	holder, _ := cloneOf(t, bare)
	if _, err := holder.Claim(ctx, view(t, holder), "features/p000.md", claims.Holder{AgentID: "gone"}, time.Second); err != nil {
		t.Fatal(err)
	}
	a, _ := cloneOf(t, bare)
	b, _ := cloneOf(t, bare)
	view(t, a)
	view(t, b)
	va, vb := view(t, a), view(t, b)
	var early *claims.TooEarlyError
	if _, err := a.TakeOver(ctx, va, "p000", claims.Holder{AgentID: "a"}, time.Minute); !errors.As(err, &early) || early.Need != 2*time.Second {
		t.Fatalf("takeover of a live lease: %v", err)
	}
	time.Sleep(2100 * time.Millisecond) // TTL 1 s + grace 1 s, on each clone's own clock
	va, vb = view(t, a), view(t, b)
	var wins, lost int
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, pair := range []struct {
		b *Backend
		v *claims.View
	}{{a, va}, {b, vb}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := pair.b.TakeOver(ctx, pair.v, "p000", claims.Holder{AgentID: string(rune('a' + i))}, time.Minute)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case errors.Is(err, claims.ErrLost):
				lost++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || lost != 1 {
		t.Fatalf("%d won, %d lost", wins, lost)
	}
	if r := view(t, holder).Lease("p000"); r == nil || r.Epoch != 2 || r.AgentID == "gone" {
		t.Fatalf("lease after takeover: %+v", r)
	}
}

// A holder whose clock is two minutes behind writes an expires_at already
// past on the observer's clock: the observer still waits out TTL + grace
// on its own clock.
func TestSkewedClockCannotTakeALiveLease(t *testing.T) {
	t.Parallel()
	bare := remoteWith(t, readyPlans(1))
	holder, _ := cloneOf(t, bare)
	v := view(t, holder)
	lease := newLease("features/p000.md", claims.Holder{AgentID: "slow-clock"}, time.Minute, 1)
	lease.ClaimedAt -= 120
	lease.ExpiresAt -= 120
	if _, err := holder.install(ctx, "p000", "features/p000.md", lease, ""); err != nil {
		t.Fatal(err)
	}
	_ = v
	obs, _ := cloneOf(t, bare)
	vo := view(t, obs)
	r := vo.Lease("p000")
	if r == nil || !r.Live {
		t.Fatalf("a lease written by a slow clock is live to a new observer: %+v", r)
	}
	var early *claims.TooEarlyError
	if _, err := obs.TakeOver(ctx, vo, "p000", claims.Holder{AgentID: "obs"}, time.Minute); !errors.As(err, &early) {
		t.Fatalf("takeover: %v", err)
	}
	if !strings.Contains(early.Error(), "of the 1m6s a takeover needs") {
		t.Errorf("message %q", early)
	}
}

func TestLeftoverLockIsReportedAndUnreachableRemoteToo(t *testing.T) {
	t.Parallel()
	bare := remoteWith(t, readyPlans(2))
	a, dir := cloneOf(t, bare)
	v := view(t, a)
	os.MkdirAll(filepath.Join(bare, "refs", "fleetwatch", "leases"), 0o755)
	os.WriteFile(filepath.Join(bare, "refs", "fleetwatch", "leases", "p000.lock"), nil, 0o644)
	_, err := a.Claim(ctx, v, "features/p000.md", claims.Holder{AgentID: "a"}, time.Minute)
	if !errors.Is(err, claims.ErrLocked) || errors.Is(err, claims.ErrUnavailable) || !strings.Contains(err.Error(), "p000.lock") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("claim behind a leftover lock: %v", err)
	}
	if r := view(t, a).Lease("p000"); r != nil {
		t.Fatalf("claimed anyway: %+v", r)
	}
	// The other plan is claimable still.
	if _, err := a.Claim(ctx, v, "features/p001.md", claims.Holder{AgentID: "a"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "remote", "set-url", "origin", filepath.Join(t.TempDir(), "gone.git"))
	if _, err := a.View(ctx); !errors.Is(err, claims.ErrUnavailable) || !strings.Contains(err.Error(), "remote origin") {
		t.Fatalf("unreachable remote: %v", err)
	}
}

func TestRemoteRefusingTheNamespaceIsReported(t *testing.T) {
	t.Parallel()
	bare := remoteWith(t, readyPlans(1))
	hook := filepath.Join(bare, "hooks", "pre-receive")
	os.WriteFile(hook, []byte("#!/bin/sh\necho 'no custom refs here' >&2\nexit 1\n"), 0o755)
	a, _ := cloneOf(t, bare)
	_, err := a.Claim(ctx, view(t, a), "features/p000.md", claims.Holder{AgentID: "a"}, time.Minute)
	if !errors.Is(err, claims.ErrUnavailable) || !strings.Contains(err.Error(), "refuses refs/fleetwatch/leases/p000") {
		t.Fatalf("hook refusing: %v", err)
	}
}

func TestCompleteRebuildsOnAMovedBranch(t *testing.T) {
	t.Parallel()
	bare := remoteWith(t, readyPlans(2))
	a, _ := cloneOf(t, bare)
	held, err := a.Claim(ctx, view(t, a), "features/p000.md", claims.Holder{AgentID: "a"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// Someone lands other work on dev meanwhile.
	_, other := cloneOf(t, bare)
	os.WriteFile(filepath.Join(other, "code.txt"), []byte("landed\n"), 0o644)
	gitIn(t, other, "add", "code.txt")
	gitIn(t, other, "commit", "-qm", "landed")
	gitIn(t, other, "push", "-q", "origin", "HEAD:dev")
	dst, err := a.Complete(ctx, held, model.ReviewNeeded)
	if err != nil || dst != "review-needed/p000.md" {
		t.Fatalf("complete: %q %v", dst, err)
	}
	log := gitIn(t, bare, "log", "--format=%s", "dev")
	if !strings.HasPrefix(log, "fleetwatch: p000 to review-needed (a)\nlanded\n") {
		t.Fatalf("dev:\n%s", log)
	}
	if out := gitIn(t, bare, "for-each-ref", "refs/fleetwatch/"); out != "" {
		t.Fatalf("lease ref left: %s", out)
	}
	// A completed plan is never claimed again, from any clone.
	b, _ := cloneOf(t, bare)
	if _, err := b.Claim(ctx, view(t, b), "features/p000.md", claims.Holder{AgentID: "b"}, time.Minute); !errors.Is(err, claims.ErrLost) {
		t.Fatalf("claim of a completed plan: %v", err)
	}
	// Completing with a lease someone took over is lost, and moves nothing.
	held2, _ := a.Claim(ctx, view(t, a), "features/p001.md", claims.Holder{AgentID: "a"}, time.Minute)
	if _, err := a.Renew(ctx, held2, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Complete(ctx, held2, model.ReviewNeeded); !errors.Is(err, claims.ErrLost) {
		t.Fatalf("complete with a stale lease: %v", err)
	}
	if exec.Command("git", "-C", bare, "cat-file", "-e", "dev:.plans/features/p001.md").Run() != nil {
		t.Fatal("a lost complete moved the plan")
	}
}
