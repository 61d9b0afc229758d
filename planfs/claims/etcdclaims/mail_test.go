//go:build etcd

package etcdclaims

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fleetwatch/fleetwatch/internal/testkit/mailtest"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// etcdWorld is one project's keys on the test server; each machine is a
// client of its own, a worker's with a worker session.
func etcdWorld(t *testing.T) mailtest.World {
	dir, id := project(t, 1)
	planter := open(t, dir, id)
	return mailtest.World{
		Open: func(worker bool) claims.Fleet {
			b := open(t, dir, id)
			if worker {
				if err := b.StartSession(context.Background(), 10*time.Second); err != nil {
					t.Fatal(err)
				}
			}
			return b
		},
		// Plant puts data as the mail key, on the worker's lease.
		Plant: func(host, agent string, data []byte) {
			ctx := context.Background()
			g, err := planter.cli.Get(ctx, planter.workerKey(host, agent))
			if err != nil || len(g.Kvs) == 0 {
				t.Fatalf("read %s on %s to plant mail: %v", agent, host, err)
			}
			lease := clientv3.LeaseID(g.Kvs[0].Lease)
			if _, err := planter.cli.Put(ctx, planter.mailKey(host, agent), string(data), clientv3.WithLease(lease)); err != nil {
				t.Fatal(err)
			}
		},
	}
}

// TestMailOnEtcd: a message reaches its run's next publish once, and
// never another run's; a stop travels beside mail; a full box, a bad
// message, no worker and an exited one are refused.
func TestMailOnEtcd(t *testing.T) {
	t.Parallel()
	mailtest.Delivery(t, etcdWorld(t))
}

// TestHostileMailOnEtcd: a planted mail key (a thousand messages,
// controls, huge texts, junk, too large) is read bounded or said
// unreadable and taken away.
func TestHostileMailOnEtcd(t *testing.T) {
	t.Parallel()
	mailtest.Hostile(t, etcdWorld(t))
}

// TestMailRaceOnEtcd: eight clients send ten notes each while the worker
// publishes every 20 ms: every one is heard, in each sender's order.
func TestMailRaceOnEtcd(t *testing.T) {
	start := time.Now()
	repeats := mailtest.Race(t, etcdWorld(t), 20*time.Millisecond, 8, 10)
	t.Logf("80 notes from 8 clients in %v: %d heard again (dropped by the driver)", time.Since(start).Round(time.Millisecond), repeats)
}

// TestMailLatencyOnEtcd: with a 1 s heartbeat, a note is heard at the
// next publish, sent at any point of the heartbeat; with the driver's
// watch of its mail key as well, within a round trip or two, however long
// the heartbeat (a minute: the watch alone).
func TestMailLatencyOnEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 10 s of heartbeats")
	}
	t.Parallel() // mostly waiting on heartbeats; the limits leave room for the others' load
	for _, c := range []struct {
		every time.Duration
		watch bool
		limit time.Duration
	}{{time.Second, false, 2500 * time.Millisecond}, {time.Minute, true, time.Second}} {
		t.Run(fmt.Sprintf("every %v watch %v", c.every, c.watch), func(t *testing.T) {
			t.Parallel()
			took := mailtest.Latency(t, etcdWorld(t), c.every, 5, c.watch)
			t.Logf("Send to heard, %v heartbeat, watch %v, etcd: min %v, median %v, max %v", c.every, c.watch,
				took[0].Round(time.Millisecond), took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
			if took[len(took)-1] > c.limit {
				t.Errorf("a note took %v to reach a worker publishing every %v (watch %v)", took[len(took)-1], c.every, c.watch)
			}
		})
	}
}
