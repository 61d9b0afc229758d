package batchtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"fleetwatch/internal/systest/landkit"
	"fleetwatch/internal/testkit"
	"fleetwatch/internal/testkit/fwtest"
)

// oneByOne is the tree landing tips on dev one after another gives.
func oneByOne(t *testing.T, dir string, tips ...string) string {
	t.Helper()
	onto := fwtest.GitOut(t, dir, "rev-parse", "dev")
	var tree string
	for _, tip := range tips {
		tree = fwtest.GitOut(t, dir, "merge-tree", "--write-tree", onto, tip)
		onto = fwtest.GitOut(t, dir, "commit-tree", tree, "-p", onto, "-p", tip, "-m", "x")
	}
	return tree
}

// A batch is checked once and lands with one swap, to the very tree
// landing its changes one by one gives; a stale approval stays out.
func TestBatchLandsTogether(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, landkit.BatchCheck)
	tips := map[string]string{}
	for _, s := range []string{"a", "b", "c"} {
		tips[s] = landkit.Feature(t, dir, s, map[string]string{s + ".txt": s + "\n"})
		landkit.Queued(t, dir, s)
	}
	landkit.Feature(t, dir, "e", map[string]string{"e.txt": "e\n"})
	landkit.Queued(t, dir, "e")
	landkit.Feature(t, dir, "e", map[string]string{"e.txt": "e2\n"}) // after the approve: stale
	want := oneByOne(t, dir, tips["a"], tips["b"], tips["c"])
	if b := batchOf(t, dir); strings.Join(b.Slugs, " ") != "a b c" {
		t.Errorf("the next batch: %+v", b)
	}
	if r := fwtest.Run(t, dir, "queue", "list"); !strings.Contains(r.Stdout, "next batch: a, b, c on ") {
		t.Errorf("queue list does not name the next batch:\n%s", r.Stdout)
	}
	r := landkit.Land(t, dir, nil)
	fwtest.Want(t, r, 0)
	for _, s := range []string{"a", "b", "c"} {
		landkit.WantLanded(t, dir, s, tips[s])
	}
	if got := fwtest.GitOut(t, dir, "rev-parse", "dev^{tree}"); got != want {
		t.Errorf("dev's tree %s, landing one by one gives %s", got, want)
	}
	if n := landkit.DevMoves(t, dir); n != 1 {
		t.Errorf("dev moved %d times, want one swap", n)
	}
	if n := strings.Count(r.Stderr, "check test on"); n != 1 {
		t.Errorf("the batch was checked %d times:\n%s", n, r.Stderr)
	}
	if st, _ := landkit.StateOf(t, dir, "e"); st != "stale" {
		t.Errorf("e, approved then moved, is %q", st)
	}
	if strings.Count(r.Stdout, "landed ") != 3 {
		t.Errorf("stdout:\n%s", r.Stdout)
	}
}

// A failing batch is retried, then bisected: the culprit stays queued as
// failed, the rest land in order.
func TestBatchBisectsToTheCulprit(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, landkit.BatchCheck)
	tips := landkit.FourChanges(t, dir, map[string]map[string]string{"c": {"bad": "c\n"}})
	r := landkit.Land(t, dir, nil)
	fwtest.Want(t, r, 0)
	for _, s := range []string{"a", "b", "d"} {
		landkit.WantLanded(t, dir, s, tips[s])
	}
	if st, why := landkit.StateOf(t, dir, "c"); st != "failed" {
		t.Errorf("the culprit c is %q (%s)", st, why)
	}
	if !strings.Contains(r.Stdout, "failed c") || !strings.Contains(r.Stderr, "retrying it once") || !strings.Contains(r.Stderr, "bisecting") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
	}
	wantEveryMoveChecked(t, dir)
	landkit.WantNotReady(t, landkit.Land(t, dir, nil), "c", "test failed")

	// Once dev moves on, c is still failed at its commit: it does not
	// ride, and fail, in the next batch; re-adding it tries it again.
	e := landkit.Feature(t, dir, "e", map[string]string{"e.txt": "e\n"})
	landkit.Queued(t, dir, "e")
	r = landkit.Land(t, dir, nil)
	fwtest.Want(t, r, 0)
	landkit.WantLanded(t, dir, "e", e)
	if strings.Contains(r.Stderr, "bisecting") || strings.Contains(r.Stderr, "retrying") {
		t.Errorf("c rode again:\n%s", r.Stderr)
	}
	if st, why := landkit.StateOf(t, dir, "c"); st != "failed" || !strings.Contains(why, "failed in a batch") {
		t.Errorf("c after dev moved on is %q (%s)", st, why)
	}
	fwtest.Want(t, fwtest.Run(t, dir, "queue", "remove", "c"), 0)
	fwtest.Want(t, fwtest.Run(t, dir, "queue", "add", "c"), 0)
	if st, _ := landkit.StateOf(t, dir, "c"); st != "queued" {
		t.Errorf("c queued again is %q", st)
	}
}

// wantEveryMoveChecked: every commit dev was swapped to has a passing
// result for its exact tree.
func wantEveryMoveChecked(t *testing.T, dir string) {
	t.Helper()
	moves := strings.Split(fwtest.GitOut(t, dir, "reflog", "--format=%H", "refs/heads/dev"), "\n")
	for _, c := range moves[:len(moves)-1] {
		tree := fwtest.GitOut(t, dir, "rev-parse", c+"^{tree}")
		hits, _ := filepath.Glob(filepath.Join(dir, "var/fleet/checks", tree, "test-*.json"))
		ok := false
		for _, h := range hits {
			if b, _ := os.ReadFile(h); !strings.HasSuffix(h, ".retry.json") && strings.Contains(string(b), `"result": "pass"`) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("dev moved to %s, whose tree %s has no pass", c, tree)
		}
	}
}

// A check that fails once and passes on the retry lands the batch and is
// recorded as flaky with its log.
func TestBatchFlakyCheckLands(t *testing.T) {
	t.Parallel()
	flag := filepath.Join(t.TempDir(), "ran")
	dir := landkit.LandProject(t, "sandbox: off\nchecks:\n  - {name: test, run: [sh, -c, 'test -f "+flag+" || { touch "+flag+"; exit 1; }']}\nqueue: {batch: 4}\n")
	tips := landkit.FourChanges(t, dir, nil)
	r := landkit.Land(t, dir, nil)
	fwtest.Want(t, r, 0)
	for s, tip := range tips {
		landkit.WantLanded(t, dir, s, tip)
	}
	if !strings.Contains(r.Stderr, "flaky") {
		t.Errorf("stderr:\n%s", r.Stderr)
	}
	tree := fwtest.GitOut(t, dir, "rev-parse", "dev^{tree}")
	if hits, _ := filepath.Glob(filepath.Join(dir, "var/fleet/checks", tree, "test-*.retry.log")); len(hits) != 1 {
		t.Errorf("the failed attempt's log is not kept: %v", hits)
	}
}

// A check with retries: 1 runs again on its own, landing alone too.
func TestCheckRetries(t *testing.T) {
	t.Parallel()
	flag := filepath.Join(t.TempDir(), "ran")
	dir := landkit.LandProject(t, "sandbox: off\nchecks:\n  - {name: test, retries: 1, run: [sh, -c, 'test -f "+flag+" || { touch "+flag+"; exit 1; }']}\n")
	tip := landkit.Feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
	landkit.Queued(t, dir, "a")
	r := landkit.Land(t, dir, nil)
	fwtest.Want(t, r, 0)
	landkit.WantLanded(t, dir, "a", tip)
	if !strings.Contains(r.Stderr, "running it again") {
		t.Errorf("stderr:\n%s", r.Stderr)
	}
}

// A lander killed at each step of a batch and its bisection, then run
// again, finishes: nothing lost, nothing landed twice.
func TestBatchKilledAtEachStepThenRerunFinishes(t *testing.T) {
	t.Parallel()
	for _, step := range []string{"batch:built", "bisect:round", "batch:checked", "batch:cas", "land:moved", "land:pinned"} {
		t.Run(strings.ReplaceAll(step, ":", "-"), func(t *testing.T) {
			t.Parallel()
			dir := landkit.LandProject(t, landkit.BatchCheck)
			fwtest.GitOut(t, dir, "checkout", "-q", "dev")
			tips := landkit.FourChanges(t, dir, map[string]map[string]string{"c": {"bad": "c\n"}})
			if r := landkit.Land(t, dir, []string{"FLEETWATCH_FAILPOINT=" + step}); r.Code != -9 {
				t.Fatalf("the failpoint did not kill the lander: %v", r)
			}
			if step == "bisect:round" {
				if b := batchOf(t, dir); b.Bisection == nil || b.Bisection.Culprit != "c" || b.Bisection.Passing != 2 {
					t.Errorf("the listing after one round of bisection: %+v", b)
				}
			}
			fwtest.Want(t, landkit.Land(t, dir, nil), 0)
			for _, s := range []string{"a", "b", "d"} {
				landkit.WantLanded(t, dir, s, tips[s])
			}
			if st, _ := landkit.StateOf(t, dir, "c"); st != "failed" {
				t.Errorf("c is %q", st)
			}
			if got := landkit.ReadFile(t, dir, "d.txt"); got != "d\n" {
				t.Errorf("the checkout of dev has d.txt = %q", got)
			}
			wantEveryMoveChecked(t, dir)
			wantNoNotice(t, dir)
		})
	}
}

// A batch that passed whole, its lander killed after the swap, is
// finished by the next landing, and the queue knows it set dev there: no
// notice of a move outside the queue.
func TestBatchKilledAfterItsSwapLeavesNoNotice(t *testing.T) {
	t.Parallel()
	for _, step := range []string{"batch:cas", "land:moved"} {
		t.Run(strings.ReplaceAll(step, ":", "-"), func(t *testing.T) {
			t.Parallel()
			dir := landkit.LandProject(t, landkit.BatchCheck)
			tips := landkit.FourChanges(t, dir, nil)
			if r := landkit.Land(t, dir, []string{"FLEETWATCH_FAILPOINT=" + step}); r.Code != -9 {
				t.Fatalf("the failpoint did not kill the lander: %v", r)
			}
			fwtest.Want(t, landkit.Land(t, dir, nil), 0)
			for s, tip := range tips {
				landkit.WantLanded(t, dir, s, tip)
			}
			wantNoNotice(t, dir)
		})
	}
}

// wantNoNotice: queue list reports no move outside the queue.
func wantNoNotice(t *testing.T, dir string) {
	t.Helper()
	r := fwtest.Run(t, dir, "queue", "list", "--json")
	var l struct {
		Notices []string `json:"notices"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &l); err != nil || len(l.Notices) != 0 {
		t.Errorf("queue list notices %v (%v)", l.Notices, err)
	}
}

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

// batchView is the batch part of queue list --json.
type batchView struct {
	Slugs     []string `json:"slugs"`
	Candidate string   `json:"candidate"`
	Checks    []struct {
		Name   string `json:"name"`
		Result string `json:"result"`
		Flaky  bool   `json:"flaky"`
	} `json:"checks"`
	Retried   bool `json:"retried"`
	Bisection *struct {
		Passing int    `json:"passing"`
		Failing int    `json:"failing"`
		Culprit string `json:"culprit"`
	} `json:"bisection"`
}

func batchOf(t *testing.T, dir string) batchView {
	t.Helper()
	r := fwtest.Run(t, dir, "queue", "list", "--json")
	fwtest.Want(t, r, 0)
	var l struct {
		Batch *batchView `json:"batch"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &l); err != nil {
		t.Fatal(err)
	}
	if l.Batch == nil {
		return batchView{}
	}
	return *l.Batch
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

// Two batch landers started together: one lands the batch, the other is
// refused or finds nothing left; dev moved once, to the checked batch.
func TestRacingBatchLandersLandOnce(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, landkit.BatchCheck)
	tips := landkit.FourChanges(t, dir, nil)
	landkit.RaceLanders(t, dir)
	for slug, tip := range tips {
		landkit.WantLanded(t, dir, slug, tip)
	}
	if n := landkit.DevMoves(t, dir); n != 1 {
		t.Errorf("dev moved %d times, want once", n)
	}
	wantEveryMoveChecked(t, dir)
}
