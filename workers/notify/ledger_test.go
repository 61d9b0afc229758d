package notify

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// TestFleetIDIsTheSameOnEveryMachine: a worker's notices name it "agent"
// on its own machine and "agent on host" on the others; in the ledger
// both are one notice.
func TestFleetIDIsTheSameOnEveryMachine(t *testing.T) {
	t.Setenv("FLEET_HOST", "gpu-box")
	one := 1
	facts := func(on string) []model.Notice {
		return model.Conditions(model.NoticeFacts{Now: 1000, Workers: []model.WorkerFact{
			{Agent: "gpu-1" + on, Plan: "bugs/a.md", Health: "exited", Exit: &one, Started: 100},
			{Agent: "gpu-2" + on, Health: "dead", Started: 200},
		}})
	}
	own, theirs := facts(""), facts(" on gpu-box")
	if len(own) != 2 || len(theirs) != 2 {
		t.Fatalf("notices: %v %v", own, theirs)
	}
	for i := range own {
		if own[i].ID == theirs[i].ID {
			t.Fatalf("the two machines' IDs are already one (%s): the test tests nothing", own[i].ID)
		}
		if a, b := fleetID(own[i]), fleetID(theirs[i]); a != b {
			t.Errorf("in the ledger %q and %q differ", a, b)
		}
	}
	plan := model.Notice{ID: "review:review-needed/a.md", Subject: model.SubjectPlan, Key: "review-needed/a.md"}
	if fleetID(plan) != plan.ID {
		t.Errorf("a plan's notice is the same everywhere: %q", fleetID(plan))
	}
	if ledgerKey("https://hooks.example/a", "x") == ledgerKey("https://hooks.example/b", "x") {
		t.Error("two hooks share a key")
	}
}

// memLedger is a NoticeLedger in memory, shared by the notifiers of a
// test as a remote is by machines: key → claim.
type memLedger struct {
	mu     sync.Mutex
	seq    int
	claims map[string]claims.NoticeClaim
}

func (l *memLedger) ClaimNotices(_ context.Context, want map[string]string) (map[string]claims.NoticeClaim, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	got := map[string]claims.NoticeClaim{}
	l.seq++
	rev := strconv.Itoa(l.seq)
	for k, seen := range want {
		if l.claims[k].Rev != seen {
			got[k] = l.claims[k]
			continue
		}
		l.claims[k] = claims.NoticeClaim{Rev: rev}
		got[k] = claims.NoticeClaim{Rev: rev, Mine: true}
	}
	return got, nil
}

func (l *memLedger) ConfirmNotices(_ context.Context, mine map[string]string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k := range mine {
		c := l.claims[k]
		c.Sent = true
		l.claims[k] = c
	}
	return nil
}

func (l *memLedger) NoticeClaims(_ context.Context, keys []string) (map[string]claims.NoticeClaim, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	got := map[string]claims.NoticeClaim{}
	for _, k := range keys {
		if c, ok := l.claims[k]; ok {
			got[k] = c
		}
	}
	return got, nil
}

// TestClaimCountsOnlyOnceConfirmed: a claim no one confirms (a squat)
// holds a notice back confirmWait, then this machine takes it over, posts
// and confirms; a claim confirmed meanwhile is sent elsewhere; one
// confirmed already is never waited on.
func TestClaimCountsOnlyOnceConfirmed(t *testing.T) {
	confirmWait, confirmPoll = 300*time.Millisecond, 20*time.Millisecond
	t.Cleanup(func() { confirmWait, confirmPoll = 5*time.Second, 500*time.Millisecond })
	h := newHook(t)
	c := webhookConf(h.srv.URL, 100)
	led := &memLedger{claims: map[string]claims.NoticeClaim{}}
	key := func(id string) string { return ledgerKey(h.srv.URL, "review:"+id) }
	led.claims[key("squat")] = claims.NoticeClaim{Rev: "squatter"}
	led.claims[key("posted")] = claims.NoticeClaim{Rev: "honest", Sent: true}
	led.claims[key("posting")] = claims.NoticeClaim{Rev: "honest-slow"}
	go func() {
		time.Sleep(100 * time.Millisecond)
		_ = led.ConfirmNotices(context.Background(), map[string]string{key("posting"): "honest-slow"})
	}()
	n := start(t.TempDir(), c, Options{Ledger: led})
	began := time.Now()
	n.Offer([]model.Notice{notice("squat", model.NoticeReview), notice("posted", model.NoticeReview), notice("posting", model.NoticeReview)})
	waitFor(t, "the squatted notice", func() bool { return len(h.got()) == 1 })
	took := time.Since(began)
	n.Close(5 * time.Second)
	if got := ids(h.got()); !slices.Equal(got, []string{"review:squat"}) {
		t.Errorf("posted %v, want the squatted notice alone", got)
	}
	if took < confirmWait {
		t.Errorf("the squatted notice went after %v, before its claim's %v", took, confirmWait)
	}
	if c := led.claims[key("squat")]; c.Rev == "squatter" || !c.Sent {
		t.Errorf("the squatted claim after the post: %+v, want taken over and confirmed", c)
	}
}
