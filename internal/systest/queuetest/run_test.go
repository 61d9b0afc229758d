package queuetest

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/systest/landkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// queue run lands while the head is ready, waits on an empty queue, and
// stops cleanly on SIGTERM; it stops on its own on a failing head.
func TestQueueRun(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, landkit.PassCheck)
	a := landkit.Feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
	landkit.Queued(t, dir, "a")
	cmd := fwtest.Cmd(dir, nil, "queue", "run")
	var out, errb testkit.LockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); !fwtest.Exists(dir, "completed/a.md"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a did not land: %s", errb.String())
		}
	}
	b := landkit.Feature(t, dir, "b", map[string]string{"b.txt": "b\n"})
	landkit.Queued(t, dir, "b")
	for deadline := time.Now().Add(60 * time.Second); !fwtest.Exists(dir, "completed/b.md"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("b did not land: %s", errb.String())
		}
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil || !strings.Contains(errb.String(), "stopped") {
		t.Errorf("queue run on SIGTERM: %v\n%s", err, errb.String())
	}
	landkit.WantLanded(t, dir, "a", a)
	landkit.WantLanded(t, dir, "b", b)

	landkit.Feature(t, dir, "c", map[string]string{"bad": "c\n"})
	landkit.Queued(t, dir, "c")
	landkit.WantNotReady(t, fwtest.Run(t, dir, "queue", "run"), "c", "test failed")
}

// A hotfix jumps the queue, a P1 plan goes before older P2 ones, and a
// plan that depends on a queued plan goes after it.
func TestQueueOrder(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, landkit.PassCheck)
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "review-needed/d.md", Fields: "Depends on: e"}, 0)
	fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "review-needed/p.md", Fields: "Priority: P1"}, 0)
	for _, s := range []string{"a", "d", "p", "e"} {
		landkit.Feature(t, dir, s, map[string]string{s + ".txt": s + "\n"})
		landkit.Queued(t, dir, s)
	}
	h := landkit.Feature(t, dir, "h", map[string]string{"h.txt": "h\n"})
	landkit.Approve(t, dir, "h")
	fwtest.Want(t, fwtest.Run(t, dir, "queue", "add", "--hotfix", "h"), 0)
	var order []string
	for _, it := range landkit.List(t, dir).Items {
		if it.Position != nil {
			order = append(order, it.Slug)
		}
	}
	if got := strings.Join(order, " "); got != "h p a e d" {
		t.Errorf("queue order %q, want h p a e d", got)
	}
	// a, queued longer than max_wait ago, counts as P1: in queue order
	// it goes before p.
	q := landkit.ReadFile(t, dir, "var/fleet/queue/queue.json")
	var f struct {
		Entries []map[string]any `json:"entries"`
	}
	if err := json.Unmarshal([]byte(q), &f); err != nil {
		t.Fatal(err)
	}
	for _, e := range f.Entries {
		if e["slug"] == "a" {
			e["added_at"] = time.Now().Add(-3 * time.Hour).UTC().Format(time.RFC3339)
		}
	}
	data, _ := json.Marshal(f)
	landkit.Write(t, dir, "var/fleet/queue/queue.json", string(data))
	order = order[:0]
	for _, it := range landkit.List(t, dir).Items {
		if it.Position != nil {
			order = append(order, it.Slug)
		}
	}
	if got := strings.Join(order, " "); got != "h a p e d" {
		t.Errorf("queue order with a waited past max_wait %q, want h a p e d", got)
	}
	fwtest.Want(t, landkit.Land(t, dir, nil), 0)
	landkit.WantLanded(t, dir, "h", h)
}

// A hotfix lands alone, never in a batch, ahead of the queue.
func TestHotfixNeverBatches(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, landkit.BatchCheck)
	landkit.FourChanges(t, dir, nil)
	h := landkit.Feature(t, dir, "h", map[string]string{"h.txt": "h\n"})
	landkit.Approve(t, dir, "h")
	fwtest.Want(t, fwtest.Run(t, dir, "queue", "add", "--hotfix", "h"), 0)
	r := landkit.Land(t, dir, nil)
	fwtest.Want(t, r, 0)
	landkit.WantLanded(t, dir, "h", h)
	if strings.Count(r.Stdout, "landed ") != 1 {
		t.Errorf("the hotfix did not land alone:\n%s", r.Stdout)
	}
	if st, _ := landkit.StateOf(t, dir, "a"); st == "landed" {
		t.Errorf("a rode with the hotfix")
	}
}

// SIGTERM while queue run checks a batch stops it cleanly and at once:
// nothing swapped, every change still queued.
func TestQueueRunStopsMidBatch(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, "checks:\n  - {name: test, run: [sh, -c, 'sleep 30']}\nqueue: {batch: 4}\n")
	landkit.FourChanges(t, dir, nil)
	before := fwtest.GitOut(t, dir, "rev-parse", "dev")
	cmd := fwtest.Cmd(dir, nil, "queue", "run")
	var errb testkit.LockedBuffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(errb.String(), "checking batch"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no batch checked: %s", errb.String())
		}
	}
	start := time.Now()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil || time.Since(start) > 20*time.Second {
		t.Errorf("queue run on SIGTERM mid-batch: %v after %v\n%s", err, time.Since(start), errb.String())
	}
	if now := fwtest.GitOut(t, dir, "rev-parse", "dev"); now != before {
		t.Errorf("dev moved to %s although the batch was never checked", now)
	}
	for _, s := range []string{"a", "b", "c", "d"} {
		if st, _ := landkit.StateOf(t, dir, s); st != "queued" && st != "checking" {
			t.Errorf("%s after the stop is %q", s, st)
		}
	}
}
