package landing

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// TestReadOnlyTreeRefusesLandingVerbs: through a viewer's tree every
// landing verb is refused with planfs.ErrReadOnly, in one line naming the
// slug (or the queue), before git or the disk is touched: the project,
// .git/ and var/ stay byte for byte as they were. Reading the queue works.
func TestReadOnlyTreeRefusesLandingVerbs(t *testing.T) {
	t.Parallel()
	op, slugs := benchProject(t, 3, "")
	approveAndQueue(t, op, slugs[:2])
	tip, err := git(op.Project, "rev-parse", "feature/"+slugs[2])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.WriteApproval(slugs[2], tip, planfs.Agent("operator")); err != nil {
		t.Fatal(err)
	}
	if _, err := ListTree(op); err != nil {
		t.Fatal(err)
	}
	ro, err := planfs.Open(op.Project)
	if err != nil {
		t.Fatal(err)
	}
	ro.ReadOnly = true
	ctx := context.Background()
	queued, approved := slugs[0], slugs[2]
	before := testkit.StateOf(t, op.Project)
	for _, v := range []struct {
		name, names string
		call        func() error
	}{
		{"Approve", approved, func() error { _, err := Approve(ro, approved, "ssh:viewer"); return err }},
		{"Add", approved, func() error { return Add(ro, approved) }},
		{"AddAs", approved, func() error { return AddAs(ro, approved, "ssh:viewer") }},
		{"Remove", queued, func() error { return Remove(ro, queued) }},
		{"RemoveAs", queued, func() error { return RemoveAs(ro, queued, "ssh:viewer") }},
		{"SendBack", queued, func() error { _, err := SendBack(ro, queued, "not yet", "ssh:viewer"); return err }},
		{"Land", queueDir, func() error { _, err := Land(ctx, ro, LandOptions{Ungated: true, Actor: "ssh:viewer"}); return err }},
		{"Peer", approved, func() error { _, err := Peer(ctx, ro, approved, PeerOptions{}); return err }},
	} {
		err := v.call()
		if !errors.Is(err, planfs.ErrReadOnly) {
			t.Errorf("%s on a read-only tree: %v, want ErrReadOnly", v.name, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, v.names+": ") {
			t.Errorf("%s: error %q should be one line naming %s", v.name, msg, v.names)
		}
	}
	before.Unchanged(t, op.Project, "landing verbs on a read-only tree")
	l, err := ListTree(ro)
	if err != nil || len(l.Items) != 3 || l.Items[0].Slug != queued || l.Items[0].Position == nil {
		t.Fatalf("ListTree on a read-only tree: %+v %v", l.Items, err)
	}
	// The operator's tree still acts: the refusal was the viewer's.
	if err := RemoveAs(op, queued, "operator"); err != nil {
		t.Fatalf("operator's remove: %v", err)
	}
}
