package batchtest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/systest/landkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
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
	if b := landkit.BatchOf(t, dir); strings.Join(b.Slugs, " ") != "a b c" {
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
	landkit.WantEveryMoveChecked(t, dir)
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
			landkit.WantNoNotice(t, dir)
		})
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
	landkit.WantEveryMoveChecked(t, dir)
}
