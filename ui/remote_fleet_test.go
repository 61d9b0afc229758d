package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// published is a record as a driver on host publishes it.
func published(host, agent string, every float64) claims.WorkerRecord {
	now := float64(time.Now().UnixNano()) / 1e9
	return claims.WorkerRecord{AgentID: agent, Host: host, Tier: "mid", Model: "qwen3-32b", Plan: "bugs/crash-on-save.md",
		State: claims.WorkerRunning, Run: "run-1", Started: now, Heartbeat: now, HeartbeatEvery: every, TTL: 900,
		Tokens: 12000, Cost: 0.42, Note: "running fake", LastLine: "compiling crate \x1b[31mfoo", LogPath: "/srv/p/var/fleet/logs/" + agent + ".log"}
}

// TestWorkersPaneShowsOtherMachinesWorkers: a worker on another clone
// publishes through the git remote; the operator's Workers pane shows it
// with its host, plan, spend and last line (made safe), not its own
// host's record twice; x asks it to stop through its record, which its
// next publish reads; l says where its log is; once silent it goes stale
// on this machine's clock and raises a notice.
func TestWorkersPaneShowsOtherMachinesWorkers(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	_, worker, h := gitRemoteFleet(t, p, claims.Holder{AgentID: "gpu-1", Host: "gpu-box", PID: 4242})
	ctx := context.Background()
	for _, rec := range []claims.WorkerRecord{published("gpu-box", "gpu-1", 0.3), published(look.Hostname(), "here-1", 60)} {
		if _, err := worker.Publish(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	h.send(remoteTickMsg{})
	h.selectWorker("gpu-1 on gpu-box")
	v := h.view()
	line := row(v, " gpu-1 ")
	for _, want := range []string{"gpu-box", "mid/qwen3-32b", "crash-on-save", "● live", "12k tokens", "running fake › compil"} {
		if !strings.Contains(line, want) {
			t.Errorf("gpu-1's row %q lacks %q", line, want)
		}
	}
	if !strings.Contains(row(v, " agent "), " host ") {
		t.Errorf("no host column: %q", row(v, " agent "))
	}
	if strings.Contains(v, "here-1") {
		t.Errorf("this machine's own published record is shown beside its state files:\n%s", v)
	}
	for _, size := range [][2]int{{80, 24}, {120, 32}} {
		h.send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		v := h.view()
		checkScreen(t, v, size[0], size[1], p)
		if line := row(v, " gpu-1 "); !strings.Contains(line, "gpu-box") || !strings.Contains(line, "live") {
			t.Errorf("at %dx%d gpu-1's row is %q", size[0], size[1], line)
		}
	}
	h.press("enter")
	if v := h.view(); !strings.Contains(v, "compiling crate ?[31mfoo") || !strings.Contains(v, "gpu-box:/srv/p/var/fleet/logs/gpu-1.log") {
		t.Errorf("enter on a remote worker shows no last line or log place:\n%s", v)
	}
	h.press("esc")
	h.press("l")
	if f := h.footer(); !strings.Contains(f, "gpu-box:/srv/p/var/fleet/logs/gpu-1.log") {
		t.Errorf("l on a remote worker: %q", f)
	}
	h.press("x")
	if !h.dialogOpen() {
		t.Fatalf("x opened no dialog: %s", h.footer())
	}
	h.press("enter")
	if f := h.footer(); !strings.Contains(f, "asked gpu-1 on gpu-box to stop") {
		t.Fatalf("stop through the backend: %q", f)
	}
	if in, err := worker.Publish(ctx, published("gpu-box", "gpu-1", 0.3)); err != nil || in.Stop == nil {
		t.Fatalf("the worker's next publish did not hear the stop: %v %v", in.Stop, err)
	}
	h.send(remoteTickMsg{}) // seen as it now is
	time.Sleep(time.Second) // two heartbeats of 0.3 s, unchanged
	h.send(remoteTickMsg{})
	if line := row(h.view(), " gpu-1 "); !strings.Contains(line, "◌ stale") {
		t.Fatalf("a silent remote worker is not stale: %q", line)
	}
	h.press("N")
	if v := h.view(); !strings.Contains(v, "gpu-1 on gpu-box stopped heartbeating") {
		t.Errorf("no notice of the stale remote worker:\n%s", v)
	}
}

// TestRemoteLogNeverFromThisMachinesLoopback: a worker whose machine's
// serve listens on loopback is not asked at 127.0.0.1 (that would be this
// machine's own serve, and another worker's log): the detail says why,
// and where its log is.
func TestRemoteLogNeverFromThisMachinesLoopback(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	_, worker, h := gitRemoteFleet(t, p, claims.Holder{AgentID: "gpu-1", Host: "gpu-box", PID: 4242})
	rec := published("gpu-box", "gpu-1", 60)
	rec.Serve = "127.0.0.1:2222"
	if _, err := worker.Publish(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	h.send(remoteTickMsg{})
	h.selectWorker("gpu-1 on gpu-box")
	h.press("l")
	v := h.view()
	for _, want := range []string{"gpu-box's fleetwatch serve: not asked: 127.0.0.1:2222 is this machine", "gpu-box:/srv/p/var/fleet/logs/gpu-1.log"} {
		if !strings.Contains(v, want) {
			t.Errorf("l on a worker whose serve is on its loopback lacks %q:\n%s", want, v)
		}
	}
}

// TestHubHearsWorkerRecords: a served session's hub reads a worker's
// record when the backend says it changed (for git, its poll of the worker
// refs), well before its claims.ReadEvery timer would.
func TestHubHearsWorkerRecords(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	_, worker, h := gitRemoteFleet(t, p, claims.Holder{AgentID: "gpu-1", Host: "gpu-box", PID: 4242})
	hub, err := NewHubClaims(p.tree, h.m.Opt.Claims)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hub.Close() })
	mb := hub.Subscribe()
	defer mb.Close()
	shows := func(agent string) bool {
		for _, msg := range mb.Take() {
			if l, ok := msg.(loadedMsg); ok && l.published != nil {
				for _, pub := range l.published.pubs {
					if pub.AgentID == agent {
						return true
					}
				}
			}
		}
		return false
	}
	time.Sleep(500 * time.Millisecond) // the hub's first reading, without the record
	shows("gpu-1")
	start := time.Now()
	if _, err := worker.Publish(context.Background(), published("gpu-box", "gpu-1", 30)); err != nil {
		t.Fatal(err)
	}
	limit := claims.ReadEvery / 2
	for !shows("gpu-1") {
		if time.Since(start) > limit {
			t.Fatalf("after %v the hub has not read the published record", limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("the hub read the record %v after its publish", time.Since(start).Round(time.Millisecond))
}
