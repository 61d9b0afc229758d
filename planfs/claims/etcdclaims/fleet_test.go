//go:build etcd

package etcdclaims

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
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
		if in, err := b.Publish(ctx, record(fmt.Sprintf("host-%d", h), "w", "run1")); err != nil || in.Stop != nil {
			t.Fatalf("publish: %v %v", in.Stop, err)
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
	in, err := pubs[1].Publish(ctx, record("host-1", "w", "run1"))
	stop := in.Stop
	if err != nil || stop == nil || stop.By != "op" {
		t.Fatalf("publish after a stop request: %+v %v", stop, err)
	}
	if in, _ := pubs[1].Publish(ctx, record("host-1", "w", "run2")); in.Stop != nil {
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

// TestFleetFloodOnEtcd: 300 readable records under host aaa and 2,100
// unreadable keys under hosts of their own, all sorting first, leave the
// genuine worker on host-b listed (aaa gives 256), and Worker reads its
// own key whatever the listing shows.
func TestFleetFloodOnEtcd(t *testing.T) {
	dir, id := project(t, 1)
	ctx := context.Background()
	b := open(t, dir, id)
	if err := b.StartSession(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	var ops []clientv3.Op
	for i := range 300 {
		ops = append(ops, clientv3.OpPut(b.workerKey("aaa", fmt.Sprintf("j%03d", i)), string(claims.EncodeRecord(record("aaa", fmt.Sprintf("j%03d", i), "r")))))
	}
	for i := range 2100 {
		ops = append(ops, clientv3.OpPut(b.workerKey(fmt.Sprintf("ab%04d", i), "x"), "junk"))
	}
	for len(ops) > 0 {
		n := min(len(ops), 100)
		if _, err := b.cli.Txn(ctx).Then(ops[:n]...).Commit(); err != nil {
			t.Fatal(err)
		}
		ops = ops[n:]
	}
	if _, err := b.Publish(ctx, record("host-b", "w", "run1")); err != nil {
		t.Fatal(err)
	}
	all, err := open(t, dir, id).Workers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hosts := map[string]int{}
	for _, p := range all {
		hosts[p.Host]++
	}
	if hosts["aaa"] != claims.MaxWorkersPerHost || hosts["host-b"] != 1 || len(all) != claims.MaxWorkers+1 {
		t.Errorf("read %d records, %d of aaa, %d of host-b; want %d, %d and 1", len(all), hosts["aaa"], hosts["host-b"], claims.MaxWorkers+1, claims.MaxWorkersPerHost)
	}
	if p, err := b.Worker(ctx, "host-b", "w"); err != nil || p.Health != claims.HealthLive || p.Run != "run1" {
		t.Errorf("Worker(host-b, w) = %+v, %v", p, err)
	}
	if _, err := b.Worker(ctx, "host-9", "w"); !errors.Is(err, claims.ErrNoWorker) {
		t.Errorf("Worker(host-9, w): %v, want ErrNoWorker", err)
	}
}
