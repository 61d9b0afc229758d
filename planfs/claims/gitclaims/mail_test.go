package gitclaims

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/mailtest"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// gitWorld is one remote whose machines are clones of it, served by git
// daemon when daemon is true (pushes and reads over a socket, as between
// machines), else by its path.
func gitWorld(t *testing.T, daemon bool) mailtest.World {
	bare := remoteWith(t, readyPlans(1))
	url := bare
	if daemon {
		url = gitDaemon(t, filepath.Dir(bare)) + filepath.Base(bare)
	}
	planter, _ := cloneOf(t, url)
	return mailtest.World{
		Open: func(bool) claims.Fleet {
			b, _ := cloneOf(t, url)
			return b
		},
		// Plant commits data as mail.json beside the record there now.
		Plant: func(host, agent string, data []byte) {
			ctx := context.Background()
			ref := WorkerRef(host, agent)
			cur, p, err := planter.readRecord(ctx, ref)
			if err != nil || p == nil {
				t.Fatalf("read %s to plant mail: %v", ref, err)
			}
			oid, err := planter.recordCommit(ctx, p.WorkerRecord, data)
			if err != nil {
				t.Fatal(err)
			}
			if res, err := planter.push(ctx, []update{{Ref: ref, Old: cur, New: oid}}); err != nil || !res[ref].ok {
				t.Fatalf("plant mail: %v %+v", err, res[ref])
			}
		},
	}
}

// TestMailOnGit: a message reaches its run's next publish once, and never
// another run's; a stop travels beside mail; a full box, a bad message, no
// worker and an exited one are refused.
func TestMailOnGit(t *testing.T) {
	t.Parallel()
	mailtest.Delivery(t, gitWorld(t, false))
}

// TestHostileMailOnGit: a planted mail.json (a thousand messages, controls,
// huge texts, junk, too large) is read bounded or said unreadable and
// replaced.
func TestHostileMailOnGit(t *testing.T) {
	t.Parallel()
	mailtest.Hostile(t, gitWorld(t, false))
}

// TestMailRaceOnGit: three machines send five notes each over git daemon
// while the worker publishes every second (a send's read and push take a
// few hundred milliseconds here, so heartbeats and the other senders'
// pushes keep landing inside it): every one is heard, in each sender's
// order.
func TestMailRaceOnGit(t *testing.T) {
	start := time.Now()
	repeats := mailtest.Race(t, gitWorld(t, true), time.Second, 3, 5)
	t.Logf("15 notes from 3 machines in %v: %d heard again (dropped by the driver)", time.Since(start).Round(time.Millisecond), repeats)
}

// TestMailLatencyOnGit: with a 1 s heartbeat over git daemon, a note is
// heard within the heartbeat and a publish's read, sent at any point of
// it; with the driver's watch of its ref (MailPoll) as well, about as
// soon, however long the heartbeat (a minute: the watch alone).
func TestMailLatencyOnGit(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 20 s of heartbeats")
	}
	t.Parallel() // mostly waiting on heartbeats; the limits leave room for the others' load
	for _, c := range []struct {
		every time.Duration
		watch bool
		limit time.Duration
	}{{time.Second, false, 3 * time.Second}, {time.Minute, true, MailPoll + 3*time.Second}} {
		t.Run(fmt.Sprintf("every %v watch %v", c.every, c.watch), func(t *testing.T) {
			t.Parallel()
			took := mailtest.Latency(t, gitWorld(t, true), c.every, 5, c.watch)
			t.Logf("Send to heard, %v heartbeat, watch %v, git daemon: min %v, median %v, max %v", c.every, c.watch,
				took[0].Round(time.Millisecond), took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
			if took[len(took)-1] > c.limit {
				t.Errorf("a note took %v to reach a worker publishing every %v (watch %v)", took[len(took)-1], c.every, c.watch)
			}
		})
	}
}
