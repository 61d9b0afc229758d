package planfs

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/model"
)

// roFixture is a project with a plan in every state a verb acts on, set up
// by an operator's tree, and a viewer's read-only tree on the same project.
type roFixture struct {
	op, ro   *Tree
	held     Claimed // in-progress/b.md, held by w
	awaiting string  // in-progress/c.md, held by the inbox
	decided  string  // in-progress/e.md, awaiting resume
	edit     *EditCopy
}

func newROFixture(t *testing.T) *roFixture {
	t.Helper()
	op := mkTree(t, "features/a.md:", "features/b.md:", "features/c.md:", "features/e.md:",
		"drafts/d.md: - **Value:** high|- **Priority:** P1", "review-needed/r.md:", "blocked/p.md:")
	f := &roFixture{op: op}
	var err error
	if f.held, err = op.ClaimHeld("features/b.md", "w", 60); err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		rel  string
		into *string
	}{{"features/c.md", &f.awaiting}, {"features/e.md", &f.decided}} {
		c, err := op.ClaimHeld(p.rel, "w2", 60)
		if err != nil {
			t.Fatal(err)
		}
		if err := op.AwaitApproval(c.Rel, Actor{AgentID: "w2", Token: c.Token}); err != nil {
			t.Fatal(err)
		}
		*p.into = c.Rel
	}
	if err := op.MarkResume(f.decided, Agent("op")); err != nil {
		t.Fatal(err)
	}
	if _, err := op.WriteApproval("r", c1, Agent("op")); err != nil {
		t.Fatal(err)
	}
	if f.edit, err = op.CopyForEdit("features/a.md"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.edit.Discard)
	if err := os.WriteFile(f.edit.Path, []byte("# a, edited\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if f.ro, err = Open(op.Project); err != nil {
		t.Fatal(err)
	}
	f.ro.ReadOnly = true
	return f
}

// roVerbs is every exported verb that writes, called through the viewer's
// tree on a target the operator's call would change, with what its error
// must name.
func (f *roFixture) roVerbs(snap *model.Snapshot) []struct {
	name, names string
	call        func() error
} {
	ro, held := f.ro, Actor{AgentID: "w", Token: f.held.Token}
	w := model.Worker{AgentID: "v", Tier: model.Mid}
	type v = struct {
		name, names string
		call        func() error
	}
	return []v{
		{"Claim", "features/a.md", func() error { _, err := ro.Claim("features/a.md", "v", 60); return err }},
		{"ClaimHeld", "features/a.md", func() error { _, err := ro.ClaimHeld("features/a.md", "v", 60); return err }},
		{"ClaimNamed", "features/a.md", func() error {
			_, _, err := ro.ClaimNamed(snap, "features/a.md", w, model.Options{NoFitCheck: true}, false, 60)
			return err
		}},
		{"ClaimNext", "", func() error {
			_, err := ro.ClaimNext(snap, w, model.Options{NoFitCheck: true}, 60, nil)
			return err
		}},
		{"Renew", f.held.Rel, func() error { _, err := ro.Renew(f.held.Rel, held, 120); return err }},
		{"Release", f.held.Rel, func() error { _, err := ro.Release(f.held.Rel, held); return err }},
		{"Recover", f.held.Rel, func() error { _, err := ro.Recover(f.held.Rel, Agent("v").Forced(true), 60); return err }},
		{"Park", f.held.Rel, func() error { _, err := ro.Park(f.held.Rel, model.Blocked, held); return err }},
		{"Return", "blocked/p.md", func() error { _, err := ro.Return("blocked/p.md", model.Features, Agent("v")); return err }},
		{"Complete", f.held.Rel, func() error { _, err := ro.Complete(f.held.Rel, model.ReviewNeeded, held); return err }},
		{"Promote", "drafts/d.md", func() error {
			_, _, err := ro.Promote("drafts/d.md", model.Features, Agent("v").Forced(true))
			return err
		}},
		{"AddPlan", "features/new.md", func() error { _, err := ro.AddPlan(model.Features, "new.md", "# new\n"); return err }},
		{"AddPlanAt", "features/new.md", func() error {
			_, err := ro.AddPlanAt(model.Features, "new.md", "# new\n", time.Now())
			return err
		}},
		{"CreatePlan", "drafts/fresh.md", func() error {
			_, err := ro.CreatePlan(model.NewPlan{Slug: "fresh", Title: "Fresh"}, "v")
			return err
		}},
		{"CopyForEdit", "features/a.md", func() error { _, err := ro.CopyForEdit("features/a.md"); return err }},
		{"WriteBack", "features/a.md", func() error { _, err := ro.WriteBack(f.edit, "v"); return err }},
		{"WriteReview", "r", func() error {
			_, err := ro.WriteReview(ReviewFile{Slug: "r", Commit: c2, Reviewer: "v", Verdict: "ACCEPT", At: time.Now()}, []byte("ok\n"))
			return err
		}},
		{"WriteApproval", "r", func() error { _, err := ro.WriteApproval("r", c2, Agent("v")); return err }},
		{"VoidApproval", "r", func() error { return ro.VoidApproval("r", Agent("v")) }},
		{"SendBack", "review-needed/r.md", func() error { _, err := ro.SendBack("review-needed/r.md", "no", Agent("v")); return err }},
		{"Defer", "review-needed/r.md", func() error { _, err := ro.Defer("review-needed/r.md", "later", Agent("v")); return err }},
		{"Land", "review-needed/r.md", func() error { _, err := ro.Land("review-needed/r.md", Agent("v")); return err }},
		{"AwaitApproval", f.held.Rel, func() error { return ro.AwaitApproval(f.held.Rel, held) }},
		{"MarkResume", f.awaiting, func() error { return ro.MarkResume(f.awaiting, Agent("v")) }},
		{"Resume", f.decided, func() error { _, err := ro.Resume(f.decided, "w2", 60, false); return err }},
	}
}

// TestReadOnlyTreeRefusesEveryVerb: a viewer's tree refuses each verb with
// ErrReadOnly, naming the plan, and leaves the project as it was, byte for
// byte; the operator's tree still does the same verbs.
func TestReadOnlyTreeRefusesEveryVerb(t *testing.T) {
	f := newROFixture(t)
	snap := scan(t, f.ro)
	before := testkit.StateOf(t, f.op.Project)
	for _, v := range f.roVerbs(snap) {
		err := v.call()
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s on a read-only tree: %v, want ErrReadOnly", v.name, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, v.names) {
			t.Errorf("%s: error %q should be one line naming %q", v.name, msg, v.names)
		}
	}
	if r := f.ro.Repair(snap); len(r.Fixed) > 0 {
		t.Errorf("Repair on a read-only tree fixed %v", r.Fixed)
	}
	f.ro.LogEvent(Event{Event: "note", Slug: "a", AgentID: "v"})
	before.Unchanged(t, f.op.Project, "verbs on a read-only tree")
	if _, err := os.Stat(f.edit.Path); err != nil {
		t.Errorf("a refused write-back lost the edited copy: %v", err)
	}
	// The same tree, writable again, acts: the refusal was the role's.
	if _, err := f.op.Renew(f.held.Rel, Actor{AgentID: "w", Token: f.held.Token}, 120); err != nil {
		t.Fatalf("operator's renew: %v", err)
	}
	if _, err := f.op.Release(f.held.Rel, Actor{AgentID: "w", Token: f.held.Token}); err != nil {
		t.Fatalf("operator's release: %v", err)
	}
}

// TestReadOnlyRepairFixesNothing: what a repair would fix stays for the
// next writable tree, and the viewer is told why nothing was fixed.
func TestReadOnlyRepairFixesNothing(t *testing.T) {
	f := newROFixture(t)
	// A lease whose plan is gone: repair removes it.
	if err := os.Remove(f.op.Abs(f.held.Rel)); err != nil {
		t.Fatal(err)
	}
	before := testkit.StateOf(t, f.op.Project)
	r := f.ro.Repair(scan(t, f.ro))
	if len(r.Fixed) > 0 || len(r.Unfixed) == 0 || !strings.Contains(r.Unfixed[0].Message, "read-only") {
		t.Fatalf("read-only repair: %+v", r)
	}
	before.Unchanged(t, f.op.Project, "a read-only repair")
	if r := f.op.Repair(scan(t, f.op)); len(r.Fixed) == 0 {
		t.Fatalf("the operator's repair fixed nothing: %+v", r)
	}
}

// TestReadOnlyTreeReads: every read a viewer's screen makes works on a
// read-only tree and changes nothing.
func TestReadOnlyTreeReads(t *testing.T) {
	f := newROFixture(t)
	before := testkit.StateOf(t, f.op.Project)
	ro := f.ro
	snap := scan(t, ro)
	if len(snap.Plans) != 7 {
		t.Errorf("scan: %v", rels(snap))
	}
	if _, err := ro.Rescan(); err != nil {
		t.Error(err)
	}
	if text, _, err := ro.ReadPlan("features/a.md"); err != nil || !strings.Contains(text, "features/a.md") {
		t.Errorf("ReadPlan: %q %v", text, err)
	}
	if evs, err := ro.Events(); err != nil || len(evs) == 0 {
		t.Errorf("Events: %d %v", len(evs), err)
	}
	if evs, err := ro.RecentEvents(3); err != nil || len(evs) != 3 {
		t.Errorf("RecentEvents: %d %v", len(evs), err)
	}
	if l := ro.ReadLease(f.held.Rel); l == nil || l.AgentID != "w" {
		t.Errorf("ReadLease: %+v", l)
	}
	if a, err := ro.ReadApproval("r"); err != nil || a == nil || a.Commit != c1 {
		t.Errorf("ReadApproval: %+v %v", a, err)
	}
	if _, err := ro.ReadReviews("r"); err != nil {
		t.Errorf("ReadReviews: %v", err)
	}
	if leases, _ := ro.Leases(); len(leases) != 3 {
		t.Errorf("Leases: %d", len(leases))
	}
	ro.Preview(snap)
	ro.Check(snap)
	_ = ro.SymlinkProblems()
	if err := ro.CheckWrites(); err != nil {
		t.Errorf("CheckWrites: %v", err)
	}
	if _, _, err := ro.Template(); err != nil {
		t.Errorf("Template: %v", err)
	}
	if have, err := ro.SlugInUse("a"); err != nil || have == "" {
		t.Errorf("SlugInUse: %q %v", have, err)
	}
	w, err := ro.Watch(10 * time.Millisecond)
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	w.Close()
	before.Unchanged(t, f.op.Project, "reads on a read-only tree")
}

// TestViaStampsEveryEvent: a tree with Via set stamps it on the events its
// verbs and LogEvent append; the agent id stays the actor's; a tree without
// Via writes no via at all.
func TestViaStampsEveryEvent(t *testing.T) {
	tr := mkTree(t, "features/a.md:")
	tr.Via = "ssh SHA256:Ab12cd"
	c, err := tr.ClaimHeld("features/a.md", "ssh:alice@laptop", 60)
	if err != nil {
		t.Fatal(err)
	}
	tr.LogEvent(Event{Event: "note", Slug: "a", AgentID: "ssh:alice@laptop"})
	for _, name := range []string{"claim", "note"} {
		if e := lastEvent(t, tr, name); e.Via != tr.Via || e.AgentID != "ssh:alice@laptop" {
			t.Errorf("%s event: via %q agent %q", name, e.Via, e.AgentID)
		}
	}
	local, err := Open(tr.Project)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := local.Release(c.Rel, Actor{AgentID: "ssh:alice@laptop", Token: c.Token}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(tr.Abs(EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if last := lines[len(lines)-1]; strings.Contains(last, `"via"`) {
		t.Errorf("an event without Via names one: %s", last)
	}
}
