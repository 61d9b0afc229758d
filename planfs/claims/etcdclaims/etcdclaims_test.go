//go:build etcd

package etcdclaims

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/etcdtest"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

func viewOf(t *testing.T, b *Backend) *claims.View {
	t.Helper()
	v, err := b.View(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestClaimShowsInView: a claim is a key whose lease the view shows, with
// the key's create revision as token, and the plan in progress.
func TestClaimShowsInView(t *testing.T) {
	dir, id := project(t, 2)
	a, b := open(t, dir, id), open(t, dir, id)
	ctx := context.Background()
	h, err := a.Claim(ctx, viewOf(t, a), "features/p000.md", claims.Holder{AgentID: "alice", Host: "gpu1"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	v := viewOf(t, b)
	r := v.Lease("p000")
	if r == nil || r.AgentID != "alice" || r.Host != "gpu1" || r.Token != h.Lease.Token || r.Version != h.Version || !r.Live || r.Backend != "etcd" {
		t.Fatalf("lease in view = %+v, held %+v", r, h)
	}
	if p := v.Snapshot.PlanAt("in-progress/p000.md"); p == nil {
		t.Fatalf("claimed plan not shown in progress: %+v", v.Snapshot.Plans)
	}
	if _, err := b.Claim(ctx, v, "features/p000.md", claims.Holder{AgentID: "bob"}, time.Minute); !errors.Is(err, claims.ErrLost) {
		t.Fatalf("second claim of a held plan: %v, want ErrLost", err)
	}
	// A stale view does not help: the server refuses the create.
	if _, err := b.Claim(ctx, &claims.View{Snapshot: v.Snapshot}, "features/p001.md", claims.Holder{AgentID: "bob"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	stale := viewOf(t, b)
	stale.Leases, stale.Snapshot = nil, viewOf(t, b).Snapshot
	stale.Snapshot.Plans = append(stale.Snapshot.Plans, model.Plan{Rel: "features/p000.md", Lane: model.Features, Name: "p000.md", Slug: "p000"})
	if _, err := b.Claim(ctx, stale, "features/p000.md", claims.Holder{AgentID: "bob"}, time.Minute); !errors.Is(err, claims.ErrLost) {
		t.Fatalf("claim through a stale view: %v, want ErrLost", err)
	}
}

// TestReleaseStaleVersionRefused: a release carrying a version that is no
// longer the key's is refused, and the newer holder keeps its key.
func TestReleaseStaleVersionRefused(t *testing.T) {
	dir, id := project(t, 1)
	a, b := open(t, dir, id), open(t, dir, id)
	ctx := context.Background()
	old, err := a.Claim(ctx, viewOf(t, a), "features/p000.md", claims.Holder{AgentID: "alice"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, old, "done"); err != nil {
		t.Fatal(err)
	}
	now, err := b.Claim(ctx, viewOf(t, b), "features/p000.md", claims.Holder{AgentID: "bob"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, old, "again"); !errors.Is(err, claims.ErrLost) {
		t.Fatalf("release with a stale version: %v, want ErrLost", err)
	}
	if _, err := a.Renew(ctx, old, time.Minute); !errors.Is(err, claims.ErrLost) {
		t.Fatalf("renew with a stale version: %v, want ErrLost", err)
	}
	if r := viewOf(t, a).Lease("p000"); r == nil || r.AgentID != "bob" || r.Token != now.Lease.Token {
		t.Fatalf("bob's lease after alice's stale release: %+v", r)
	}
	if _, err := b.Renew(ctx, now, time.Minute); err != nil {
		t.Fatalf("the holder's renew: %v", err)
	}
	if _, err := claims.HeldFrom(viewOf(t, a), "p000", "alice", ""); !errors.Is(err, claims.ErrNotHolder) {
		t.Fatalf("HeldFrom for the old holder: %v", err)
	}
}

// TestExpiredLease: a claim-only lease not renewed expires on the server;
// renewing it then is ErrLost, a takeover before that is too early, and of
// two racing takeovers of the expired lease one wins.
func TestExpiredLease(t *testing.T) {
	t.Parallel()
	dir, id := project(t, 1)
	a, b, c := open(t, dir, id), open(t, dir, id), open(t, dir, id)
	ctx := context.Background()
	h, err := a.Claim(ctx, viewOf(t, a), "features/p000.md", claims.Holder{AgentID: "alice"}, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	seen := viewOf(t, b)
	var early *claims.TooEarlyError
	if _, err := b.TakeOver(ctx, seen, "p000", claims.Holder{AgentID: "bob"}, time.Minute); !errors.As(err, &early) || early.Need <= 0 || early.Need > 3*time.Second {
		t.Fatalf("takeover of a live lease: %v, want a TooEarlyError needing ≤ 3 s", err)
	}
	if !waitFor(15*time.Second, func() bool { return viewOf(t, a).Lease("p000") == nil }) {
		t.Fatal("a 3 s lease still there after 15 s")
	}
	if _, err := a.Renew(ctx, h, 3*time.Second); !errors.Is(err, claims.ErrLost) {
		t.Fatalf("renew after expiry: %v, want ErrLost", err)
	}
	var wg sync.WaitGroup
	res := make([]error, 2)
	for i, be := range []*Backend{b, c} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, res[i] = be.TakeOver(ctx, seen, "p000", claims.Holder{AgentID: fmt.Sprint("r", i)}, time.Minute)
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range res {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, claims.ErrLost):
			t.Fatalf("racing takeover: %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("racing takeovers: %d won (%v), want 1", wins, res)
	}
	if r := viewOf(t, a).Lease("p000"); r == nil || r.Epoch != 2 {
		t.Fatalf("lease after takeover: %+v, want epoch 2", r)
	}
}

// TestRenewKeepsLease: heartbeats keep a claim-only lease past its TTL.
func TestRenewKeepsLease(t *testing.T) {
	t.Parallel()
	dir, id := project(t, 1)
	a := open(t, dir, id)
	ctx := context.Background()
	h, err := a.Claim(ctx, viewOf(t, a), "features/p000.md", claims.Holder{AgentID: "alice"}, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// A 3 s TTL renewed every 0.5 s: room for a renewal slowed by the
	// race detector and the race test running beside it.
	for range 10 {
		time.Sleep(500 * time.Millisecond)
		if h, err = a.Renew(ctx, h, 3*time.Second); err != nil {
			t.Fatalf("renew: %v", err)
		}
	}
	if r := viewOf(t, a).Lease("p000"); r == nil || r.Token != h.Lease.Token {
		t.Fatalf("renewed lease gone after 5 s of a 3 s TTL: %+v", r)
	}
}

const workerEnv = "ETCDCLAIMS_DEAD_WORKER"

// deadWorker is the helper process of TestDeadWorker: it claims the plans
// of its project on a 3 s session, says so, and waits to be killed.
func deadWorker() int {
	f := strings.Split(os.Getenv(workerEnv), "|")
	b, err := Open(claims.Config{Backend: "etcd", Project: f[1], Endpoints: []string{f[0]}, ProjectID: f[2]})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	ctx := context.Background()
	if err := b.StartSession(ctx, 3*time.Second); err != nil {
		fmt.Println("error", err)
		return 1
	}
	n := 0
	for {
		v, err := b.View(ctx)
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		p := plansIn(v.Snapshot, model.Features)
		if len(p) == 0 {
			break
		}
		if _, err := b.Claim(ctx, v, p[0].Rel, claims.Holder{AgentID: "doomed"}, time.Hour); err != nil {
			fmt.Println("error", err)
			return 1
		}
		n++
	}
	fmt.Println("claimed", n)
	time.Sleep(60 * time.Second) // bounded: the test kills it long before
	return 0
}

// TestDeadWorker: a worker process killed with SIGKILL holds 3 plans on its
// session; the session lease expires and the claims vanish by themselves.
func TestDeadWorker(t *testing.T) {
	t.Parallel()
	dir, id := project(t, 3)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerEnv+"="+endpoint+"|"+dir+"|"+id)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case l := <-line:
		if l != "claimed 3" {
			t.Fatalf("worker said %q", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("worker claimed nothing in 30 s")
	}
	b := open(t, dir, id)
	if n := len(viewOf(t, b).Leases); n != 3 {
		t.Fatalf("%d leases while the worker lives, want 3", n)
	}
	// Outlive a few keep-alives: a live session holds past its TTL.
	time.Sleep(4 * time.Second)
	if n := len(viewOf(t, b).Leases); n != 3 {
		t.Fatalf("%d leases after 4 s of a live 3 s session, want 3", n)
	}
	killed := time.Now()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if !waitFor(15*time.Second, func() bool { return len(viewOf(t, b).Leases) == 0 }) {
		t.Fatal("a dead worker's claims still there 15 s after its death")
	}
	t.Logf("claims vanished %v after the kill", time.Since(killed).Round(100*time.Millisecond))
	if n := len(plansIn(viewOf(t, b).Snapshot, model.Features)); n != 3 {
		t.Fatalf("%d plans ready after the worker died, want 3", n)
	}
}

// TestWatchDeliversChange: Changes receives once another worker claims.
func TestWatchDeliversChange(t *testing.T) {
	dir, id := project(t, 1)
	a, b := open(t, dir, id), open(t, dir, id)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := a.Changes(ctx)
	time.Sleep(300 * time.Millisecond) // let the watch start
	if _, err := b.Claim(ctx, viewOf(t, b), "features/p000.md", claims.Holder{AgentID: "bob"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("no change delivered 10 s after a claim")
	}
	cancel()
	for range ch { // closes once ctx ends
	}
}

// TestRootCommitProjectID: without claims.project the id is the
// integration branch's root commit, so two clones share one prefix.
func TestRootCommitProjectID(t *testing.T) {
	dir, _ := project(t, 1)
	gitIn(t, dir, "init", "-q", "-b", "dev")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "one")
	root := gitIn(t, dir, "rev-parse", "HEAD")
	gitIn(t, dir, "commit", "-qm", "two", "--allow-empty")
	b, err := Open(claims.Config{Backend: "etcd", Project: dir, Endpoints: []string{endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if want := "/fleetwatch/" + root + "/leases/"; b.Prefix() != want {
		t.Fatalf("prefix %q, want %q", b.Prefix(), want)
	}
	shallow := t.TempDir()
	gitIn(t, shallow, "clone", "-q", "--depth", "1", "file://"+dir, "c")
	if _, err := Open(claims.Config{Backend: "etcd", Project: shallow + "/c", Endpoints: []string{endpoint}}); err == nil || !strings.Contains(err.Error(), "shallow") {
		t.Fatalf("open in a shallow clone: %v, want a shallow-clone error", err)
	}
}

// TestUnreachable: an endpoint nobody listens on is ErrUnavailable, one line.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	dir, id := project(t, 1)
	port, err := etcdtest.FreePort()
	if err != nil {
		t.Skip(err)
	}
	b, err := Open(claims.Config{Backend: "etcd", Project: dir, Endpoints: []string{"http://127.0.0.1:" + strconv.Itoa(port)}, ProjectID: id, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = b.View(context.Background())
	if !errors.Is(err, claims.ErrUnavailable) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("view of an unreachable etcd: %v", err)
	}
}

// plansIn is the plans of s in lane.
func plansIn(s *model.Snapshot, lane model.Lane) []model.Plan {
	var out []model.Plan
	for _, p := range s.Plans {
		if p.Lane == lane {
			out = append(out, p)
		}
	}
	return out
}

// TestGlanceReadsKeysOnly: a glance shows every key as a lease, with the
// holder as last decoded at its revision or unknown, and the plan in
// progress all the same.
func TestGlanceReadsKeysOnly(t *testing.T) {
	dir, id := project(t, 2)
	a, b := open(t, dir, id), open(t, dir, id)
	ctx := context.Background()
	h, err := a.Claim(ctx, viewOf(t, a), "features/p000.md", claims.Holder{AgentID: "alice"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	g, err := b.Glance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := g.Lease("p000")
	if r == nil || r.AgentID != "(not read)" || r.Token != h.Lease.Token || r.Version != h.Version || g.Snapshot.PlanAt("in-progress/p000.md") == nil {
		t.Fatalf("glanced lease %+v", r)
	}
	if _, err := b.Claim(ctx, g, "features/p000.md", claims.Holder{AgentID: "bob"}, time.Minute); !errors.Is(err, claims.ErrLost) {
		t.Fatalf("claim of a glanced lease: %v", err)
	}
	viewOf(t, b)
	if g, err = b.Glance(ctx); err != nil || g.Lease("p000").AgentID != "alice" {
		t.Fatalf("a glance after a view: %+v %v", g.Lease("p000"), err)
	}
}
