package workers

import (
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// A holder whose last good renewal began more than TTL minus one heartbeat
// ago stops, without asking the backend: by then an observer may already
// count the lease expired.
func TestKeeperStopsAfterTTLLessOneHeartbeat(t *testing.T) {
	ttl := 15 * time.Minute
	k := &backendKeeper{ttl: ttl, every: ttl / 3, held: claims.Held{Slug: "a", Renewed: time.Now().Add(-9 * time.Minute)}}
	if !k.Holds() {
		t.Fatal("9 minutes into a 15-minute lease renewed every 5: no longer held")
	}
	k.held.Renewed = time.Now().Add(-10*time.Minute - time.Second)
	if k.Holds() {
		t.Fatal("10 minutes after the last renewal began: still held")
	}
	lost, err := k.Renew() // b is nil: it must not be asked
	if err != nil || !strings.Contains(lost, "not renewed for 10m") {
		t.Fatalf("Renew past the deadline: lost %q, err %v", lost, err)
	}
}
