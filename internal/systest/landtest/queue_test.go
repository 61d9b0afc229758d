package landtest

import (
	"os"
	"strings"
	"testing"

	"fleetwatch/internal/testkit/fwtest"
)

func TestQueueListAddRemove(t *testing.T) {
	t.Parallel()
	dir := landProject(t, passCheck+"  - {name: lint, run: [sh, -c, 'true']}\n")
	r := fwtest.Run(t, dir, "queue", "list")
	fwtest.Want(t, r, 0)
	if !strings.Contains(r.Stdout, "no candidates") {
		t.Errorf("an empty list: %v", r)
	}
	if l := list(t, dir); l.Integration != "dev" || len(l.Items) != 0 || l.Tip == "" {
		t.Errorf("an empty listing: %+v", l)
	}
	tip := feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
	feature(t, dir, "b", map[string]string{"b.txt": "b\n"})
	queued(t, dir, "b")
	r = fwtest.Run(t, dir, "queue", "list")
	fwtest.Want(t, r, 0)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "1 ") || !strings.Contains(lines[1], "b ") ||
		!strings.Contains(lines[1], "test:missing lint:missing") || !strings.Contains(lines[2], tip[:12]) ||
		!strings.Contains(lines[2], "needs review") || !strings.Contains(lines[2], "+1/-0") {
		t.Errorf("queue list:\n%s", r.Stdout)
	}
	l := list(t, dir)
	if l.Items[0].Slug != "b" || l.Items[1].Slug != "a" || l.Items[1].Position != nil {
		t.Errorf("queue entries first, then the rest: %+v", l.Items)
	}

	r = fwtest.Run(t, dir, "queue", "remove", "a")
	fwtest.Want(t, r, 1)
	fwtest.Want(t, fwtest.Run(t, dir, "queue", "remove", "b"), 0)
	if st, _ := stateOf(t, dir, "b"); st != "approved" {
		t.Errorf("b out of the queue is %q", st)
	}

	// An entry whose plan left review-needed/ is shown, then dropped by
	// the next change to the queue.
	queued(t, dir, "a")
	fwtest.Want(t, fwtest.Run(t, dir, "queue", "add", "b"), 0)
	if err := os.Rename(dir+"/.plans/review-needed/a.md", dir+"/.plans/blocked/a.md"); err != nil {
		t.Fatal(err)
	}
	if l := list(t, dir); len(l.Items) != 2 || l.Items[0].Slug != "a" || !strings.Contains(l.Items[0].Why, "left review-needed") {
		t.Errorf("an entry whose plan left: %+v", l.Items)
	}
	fwtest.Want(t, fwtest.Run(t, dir, "queue", "remove", "b"), 0)
	if l := list(t, dir); len(l.Items) != 1 || l.Items[0].Position != nil {
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
	dir := landProject(t, passCheck+"queue: {depth: 2}\n")
	a := feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
	b := feature(t, dir, "b", map[string]string{"b.txt": "b\n"})
	feature(t, dir, "c", map[string]string{"c.txt": "c\n"})
	for _, s := range []string{"a", "b", "c"} {
		queued(t, dir, s)
	}
	fwtest.Want(t, land(t, dir, nil), 0)
	wantLanded(t, dir, "a", a)
	if st, why := stateOf(t, dir, "b"); st != "ready" {
		t.Errorf("b, checked ahead of its turn, is %q (%s)", st, why)
	}
	if st, _ := stateOf(t, dir, "c"); st != "queued" {
		t.Errorf("c, beyond the depth, is %q", st)
	}
	r := land(t, dir, nil)
	fwtest.Want(t, r, 0)
	wantLanded(t, dir, "b", b)
	if strings.Contains(r.Stderr, "checking "+b[:12]) {
		t.Errorf("b was checked again: %s", r.Stderr)
	}
}

// A speculative failure behind the head restarts the entries behind it on
// a chain without it.
func TestSpeculationRestartsBehindAFailure(t *testing.T) {
	t.Parallel()
	dir := landProject(t, passCheck+"queue: {depth: 3}\n")
	a := feature(t, dir, "a", map[string]string{"a.txt": "a\n"})
	feature(t, dir, "b", map[string]string{"bad": "b\n"})
	c := feature(t, dir, "c", map[string]string{"c.txt": "c\n"})
	for _, s := range []string{"a", "b", "c"} {
		queued(t, dir, s)
	}
	fwtest.Want(t, land(t, dir, nil), 0)
	wantLanded(t, dir, "a", a)
	if st, _ := stateOf(t, dir, "b"); st != "failed" {
		t.Errorf("b, failing ahead of its turn, is %q", st)
	}
	// c's chain was rebuilt without b: its candidate on dev is checked.
	if st, why := stateOf(t, dir, "c"); st != "ready" {
		t.Errorf("c behind the failing b is %q (%s)", st, why)
	}
	wantNotReady(t, land(t, dir, nil), "test failed")
	fwtest.Want(t, fwtest.Run(t, dir, "queue", "send-back", "b"), 0)
	r := land(t, dir, nil)
	fwtest.Want(t, r, 0)
	wantLanded(t, dir, "c", c)
	if strings.Contains(r.Stderr, "checking") {
		t.Errorf("c was checked again: %s", r.Stderr)
	}
}
