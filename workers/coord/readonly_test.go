package coord

import (
	"errors"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// TestReadOnlyTreeRefusesDecisions: an operator's Approver through a
// viewer's tree is refused, with both ErrReadOnly sentinels and one line
// naming the slug, before the slug's lock or any file is made; the inbox
// still reads; the same approver through a writable tree decides.
func TestReadOnlyTreeRefusesDecisions(t *testing.T) {
	tr, _ := waitingTree(t)
	ro, err := planfs.Open(tr.Project)
	if err != nil {
		t.Fatal(err)
	}
	ro.ReadOnly = true
	before := testkit.StateOf(t, tr.Project)
	for _, v := range []struct {
		name string
		call func() error
	}{
		{"approve", func() error { _, err := Approve(ro, "a", op, nil); return err }},
		{"approve --edit", func() error { _, err := Approve(ro, "a", op, []byte("# mine\n")); return err }},
		{"reject", func() error { _, err := Reject(ro, "a", "no", op); return err }},
		{"a read-only approver", func() error {
			_, err := Approve(tr, "a", Approver{AgentID: "viewer", ReadOnly: true}, nil)
			return err
		}},
	} {
		err := v.call()
		if !errors.Is(err, planfs.ErrReadOnly) || !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s: %v, want both ErrReadOnly", v.name, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "a: ") {
			t.Errorf("%s: %q should be one line naming a", v.name, msg)
		}
	}
	before.Unchanged(t, tr.Project, "decisions through a read-only tree")
	es, err := Inbox(ro)
	if err != nil || len(es) != 1 || !es[0].Waiting() {
		t.Fatalf("Inbox on a read-only tree: %+v %v", es, err)
	}
	before.Unchanged(t, tr.Project, "reading the inbox")
	if _, err := Approve(tr, "a", op, nil); err != nil {
		t.Fatalf("operator's approve: %v", err)
	}
}
