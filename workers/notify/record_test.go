package notify

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"fleetwatch/model"
)

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
