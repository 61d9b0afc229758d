package queuetest

import (
	"os"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/systest/landkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

func TestQueueListAddRemove(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, landkit.PassCheck+"  - {name: lint, run: [sh, -c, 'true']}\n")
	r := fwtest.Run(t, dir, "queue", "list")
	fwtest.Want(t, r, 0)
	if !strings.Contains(r.Stdout, "no candidates") {
		t.Errorf("an empty list: %v", r)
	}
	if l := landkit.List(t, dir); l.Integration != "dev" || len(l.Items) != 0 || l.Tip == "" {
		t.Errorf("an empty landkit.Listing: %+v", l)
	}
	tip := landkit.Feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
	landkit.Feature(t, dir, "b", map[string]string{"b.txt": "b\n"})
	landkit.Queued(t, dir, "b")
	r = fwtest.Run(t, dir, "queue", "list")
	fwtest.Want(t, r, 0)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "1 ") || !strings.Contains(lines[1], "b ") ||
		!strings.Contains(lines[1], "test:missing lint:missing") || !strings.Contains(lines[2], tip[:12]) ||
		!strings.Contains(lines[2], "needs review") || !strings.Contains(lines[2], "+1/-0") {
		t.Errorf("queue list:\n%s", r.Stdout)
	}
	l := landkit.List(t, dir)
	if l.Items[0].Slug != "b" || l.Items[1].Slug != "a" || l.Items[1].Position != nil {
		t.Errorf("queue entries first, then the rest: %+v", l.Items)
	}

	r = fwtest.Run(t, dir, "queue", "remove", "a")
	fwtest.Want(t, r, 1)
	fwtest.Want(t, fwtest.Run(t, dir, "queue", "remove", "b"), 0)
	if st, _ := landkit.StateOf(t, dir, "b"); st != "approved" {
		t.Errorf("b out of the queue is %q", st)
	}

	// An entry whose plan left review-needed/ is shown, then dropped by
	// the next change to the queue.
	landkit.Queued(t, dir, "a")
	fwtest.Want(t, fwtest.Run(t, dir, "queue", "add", "b"), 0)
	if err := os.Rename(dir+"/.plans/review-needed/a.md", dir+"/.plans/blocked/a.md"); err != nil {
		t.Fatal(err)
	}
	if l := landkit.List(t, dir); len(l.Items) != 2 || l.Items[0].Slug != "a" || !strings.Contains(l.Items[0].Why, "left review-needed") {
		t.Errorf("an entry whose plan left: %+v", l.Items)
	}
	fwtest.Want(t, fwtest.Run(t, dir, "queue", "remove", "b"), 0)
	if l := landkit.List(t, dir); len(l.Items) != 1 || l.Items[0].Position != nil {
		t.Errorf("the gone entry was not dropped: %+v", l.Items)
	}
	for _, args := range [][]string{{"queue", "add"}, {"queue", "list", "x"}, {"queue", "nope"}, {"queue", "send-back", "zz"}, {"queue", "land"}} {
		fwtest.Want(t, fwtest.Run(t, dir, args...), 2)
	}
}

// With depth 2 the entry behind the head is checked on the candidate it
// would have once the head lands, so after the head lands it is ready at
// once; entries keep reading queued/checking against a new base otherwise.
func TestSpeculativeChecks(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, landkit.PassCheck+"queue: {depth: 2}\n")
	a := landkit.Feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
	b := landkit.Feature(t, dir, "b", map[string]string{"b.txt": "b\n"})
	landkit.Feature(t, dir, "c", map[string]string{"c.txt": "c\n"})
	for _, s := range []string{"a", "b", "c"} {
		landkit.Queued(t, dir, s)
	}
	fwtest.Want(t, landkit.Land(t, dir, nil), 0)
	landkit.WantLanded(t, dir, "a", a)
	if st, why := landkit.StateOf(t, dir, "b"); st != "ready" {
		t.Errorf("b, checked ahead of its turn, is %q (%s)", st, why)
	}
	if st, _ := landkit.StateOf(t, dir, "c"); st != "queued" {
		t.Errorf("c, beyond the depth, is %q", st)
	}
	r := landkit.Land(t, dir, nil)
	fwtest.Want(t, r, 0)
	landkit.WantLanded(t, dir, "b", b)
	if strings.Contains(r.Stderr, "checking "+b[:12]) {
		t.Errorf("b was checked again: %s", r.Stderr)
	}
}

// A speculative failure behind the head restarts the entries behind it on
// a chain without it.
func TestSpeculationRestartsBehindAFailure(t *testing.T) {
	t.Parallel()
	dir := landkit.LandProject(t, landkit.PassCheck+"queue: {depth: 3}\n")
	a := landkit.Feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
	landkit.Feature(t, dir, "b", map[string]string{"bad": "b\n"})
	c := landkit.Feature(t, dir, "c", map[string]string{"c.txt": "c\n"})
	for _, s := range []string{"a", "b", "c"} {
		landkit.Queued(t, dir, s)
	}
	fwtest.Want(t, landkit.Land(t, dir, nil), 0)
	landkit.WantLanded(t, dir, "a", a)
	if st, _ := landkit.StateOf(t, dir, "b"); st != "failed" {
		t.Errorf("b, failing ahead of its turn, is %q", st)
	}
	// c's chain was rebuilt without b: its candidate on dev is checked.
	if st, why := landkit.StateOf(t, dir, "c"); st != "ready" {
		t.Errorf("c behind the failing b is %q (%s)", st, why)
	}
	landkit.WantNotReady(t, landkit.Land(t, dir, nil), "test failed")
	fwtest.Want(t, fwtest.Run(t, dir, "queue", "send-back", "b"), 0)
	r := landkit.Land(t, dir, nil)
	fwtest.Want(t, r, 0)
	landkit.WantLanded(t, dir, "c", c)
	if strings.Contains(r.Stderr, "checking") {
		t.Errorf("c was checked again: %s", r.Stderr)
	}
}
