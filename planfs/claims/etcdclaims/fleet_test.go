//go:build etcd

package etcdclaims

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"fleetwatch/planfs/claims"
)

func record(host, agent, run string) claims.WorkerRecord {
	now := float64(time.Now().UnixNano()) / 1e9
	return claims.WorkerRecord{AgentID: agent, Host: host, Tier: "mid", State: claims.WorkerRunning,
		Run: run, Started: now, Heartbeat: now, HeartbeatEvery: 0.2, TTL: 5, Note: "running fake"}
}

// TestFleetOnEtcd: three clients with worker sessions stand for machines;
// a reader sees every one with its host, a silent one goes stale, one
// whose session ends goes dead, and a stop request reaches the next
// publish of the worker it names.
func TestFleetOnEtcd(t *testing.T) {
	dir, id := project(t, 1)
	ctx := context.Background()
	var pubs []*Backend
	for h := range 3 {
		b := open(t, dir, id)
		if err := b.StartSession(ctx, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		pubs = append(pubs, b)
		if stop, err := b.Publish(ctx, record(fmt.Sprintf("host-%d", h), "w", "run1")); err != nil || stop != nil {
			t.Fatalf("publish: %v %v", stop, err)
		}
	}
	reader := open(t, dir, id)
	if _, err := reader.Publish(ctx, record("r", "w", "x")); err == nil {
		t.Fatal("a publish without a worker session should be refused")
	}
	health := func() map[string]string {
		all, err := reader.Workers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, p := range all {
			out[p.Host+"/"+p.AgentID] = p.Health
		}
		return out
	}
	if h := health(); len(h) != 3 || h["host-1/w"] != claims.HealthLive {
		t.Fatalf("read %v", h)
	}
	if err := pubs[0].RequestStop(ctx, "host-1", "w", claims.StopRequest{By: "op", Host: "host-0"}); err != nil {
		t.Fatal(err)
	}
	stop, err := pubs[1].Publish(ctx, record("host-1", "w", "run1"))
	if err != nil || stop == nil || stop.By != "op" {
		t.Fatalf("publish after a stop request: %+v %v", stop, err)
	}
	if stop, _ := pubs[1].Publish(ctx, record("host-1", "w", "run2")); stop != nil {
		t.Fatal("a stop request for one run stops the next")
	}
	if err := pubs[0].RequestStop(ctx, "host-9", "w", claims.StopRequest{By: "op"}); !errors.Is(err, claims.ErrNoWorker) {
		t.Fatalf("stop of no worker: %v", err)
	}
	pubs[2].Close() // host-2's worker dies: its session's lease is revoked
	saw := map[string]bool{}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !saw[claims.HealthStale]; {
		time.Sleep(100 * time.Millisecond)
		if _, err := pubs[0].Publish(ctx, record("host-0", "w", "run1")); err != nil {
			t.Fatal(err)
		}
		h := health()
		if h["host-0/w"] != claims.HealthLive || h["host-2/w"] != claims.HealthDead {
			t.Fatalf("misjudged: %v", h)
		}
		saw[h["host-1/w"]] = true
	}
	if !saw[claims.HealthStale] {
		t.Fatalf("a silent worker should go stale on the reader's clock; saw %v", saw)
	}
}
