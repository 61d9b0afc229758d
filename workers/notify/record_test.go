package notify

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
)

// A notice whose text or ID is huge (a worker's note, a scope violation
// over thousands of paths), and a summary of every notice that may wait,
// are claimed as surely as a small one: none is sent again after a restart.
func TestHugeNoticeClaimedOnce(t *testing.T) {
	h := newHook(t)
	project := t.TempDir()
	var mu sync.Mutex
	now := time.Unix(5000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	note := notice("note", model.NoticeWorkerFailed)
	note.Text = strings.Repeat("n", 100<<10)
	paths := notice(strings.Repeat("src/x<&>.go,", 10<<10), model.NoticeScopeViolation)
	n := start(project, webhookConf(h.srv.URL, 100), Options{Now: clock})
	n.Offer([]model.Notice{note, paths})
	n.Close(5 * time.Second)
	var many []model.Notice
	for i := range pendingMax {
		many = append(many, notice(strings.Repeat("<", 200)+string(rune('a'+i%26))+strings.Repeat("z", i/26), model.NoticeReview))
	}
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	n = start(project, webhookConf(h.srv.URL, 1), Options{Now: clock})
	n.Offer(many)
	n.Close(5 * time.Second)
	if got := len(h.got()); got != 3 {
		t.Fatalf("%d messages, want 3", got)
	}
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	r := start(project, webhookConf(h.srv.URL, 100), Options{Now: clock})
	r.Offer(append([]model.Notice{note, paths}, many...))
	r.Close(5 * time.Second)
	if got := h.got(); len(got) != 3 {
		t.Fatalf("sent again after a restart: %d messages, want 3", len(got))
	}
}

// A record cut short mid-line (a crash, a full disk) does not swallow the
// next claim: it is not sent again.
func TestClaimAfterTruncatedLine(t *testing.T) {
	h := newHook(t)
	project := t.TempDir()
	os.MkdirAll(filepath.Join(project, "var/fleet/notify"), 0o755)
	os.WriteFile(filepath.Join(project, RecordRel), []byte(`{"at":"2026-01-01T00:00:00Z","to":"team","state":"sen`), 0o644)
	x := notice("a", model.NoticeReview)
	n := start(project, webhookConf(h.srv.URL, 100), Options{})
	n.Offer([]model.Notice{x})
	n.Close(5 * time.Second)
	r := start(project, webhookConf(h.srv.URL, 100), Options{})
	r.Offer([]model.Notice{x})
	r.Close(5 * time.Second)
	if got := len(h.got()); got != 1 {
		t.Fatalf("%d messages for one notice", got)
	}
}

// A claim stamped later than now (the clock was set back, or the line is
// forged) does not hold the target's rate until that time comes.
func TestFutureClaimDoesNotHoldTheRate(t *testing.T) {
	h := newHook(t)
	project := t.TempDir()
	os.MkdirAll(filepath.Join(project, "var/fleet/notify"), 0o755)
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	os.WriteFile(filepath.Join(project, RecordRel), []byte(`{"at":"`+future+`","to":"team","state":"claimed","msg":"m","ids":["review:x"]}`+"\n"), 0o644)
	n := start(project, webhookConf(h.srv.URL, 1), Options{})
	n.Offer([]model.Notice{notice("a", model.NoticeReview)})
	waitFor(t, "the notice", func() bool { return len(h.got()) == 1 })
	n.Close(5 * time.Second)
}
