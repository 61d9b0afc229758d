package coord

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

const proposalText = "# Plan for a\n\nDo it.\n\n## Files in scope\n- src/\n- README.md\n"

// waitingTree is a project with features/a.md claimed by agent w, whose
// plan turn wrote proposal 1 (recorded) and handed the lease to the inbox.
func waitingTree(t *testing.T) (*planfs.Tree, planfs.Claimed) {
	t.Helper()
	dir := t.TempDir()
	if _, err := planfs.Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".plans/features/a.md"), []byte("# Plan: a\n\n- **Plan first:** yes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	held, err := tr.ClaimHeld("features/a.md", "w", 60)
	if err != nil {
		t.Fatal(err)
	}
	writeProposal(t, tr, held, 1, proposalText)
	return tr, held
}

// writeProposal is a plan turn of w: proposal n written, recorded, lease
// to the inbox.
func writeProposal(t *testing.T, tr *planfs.Tree, held planfs.Claimed, want int, text string) {
	t.Helper()
	path, n, err := NextProposal(tr.Project, "a")
	if err != nil || n != want {
		t.Fatalf("NextProposal: %q %d %v, want %d", path, n, err, want)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	rec, err := RecordProposal(tr.Project, Record{Slug: "a", N: n, Plan: held.Rel, AgentID: "w", RunID: "run-1"})
	if err != nil || rec.SHA256 == "" || rec.At.IsZero() {
		t.Fatalf("RecordProposal: %+v %v", rec, err)
	}
	if err := tr.AwaitApproval(held.Rel, planfs.Actor{AgentID: "w", Token: held.Token}); err != nil {
		t.Fatal(err)
	}
}

var op = Approver{AgentID: "operator-tester"}

func TestApprove(t *testing.T) {
	tr, held := waitingTree(t)
	inbox, err := Inbox(tr)
	if err != nil || len(inbox) != 1 {
		t.Fatalf("inbox: %+v %v", inbox, err)
	}
	e := inbox[0]
	if !e.Waiting() || e.N != 1 || e.Problem != "" || !e.ScopeFound || strings.Join(e.Scope.Patterns, ",") != "src/,README.md" || e.Title != "Plan: a" {
		t.Fatalf("entry: %+v", e)
	}
	if text, err := ApprovedText(tr.Project, "a"); err != nil || text != "" {
		t.Fatalf("ApprovedText before the approval: %q %v", text, err)
	}
	if text, err := ApprovedText(tr.Project, "b"); err != nil || text != "" {
		t.Fatalf("ApprovedText of a plan with no proposal: %q %v", text, err)
	}
	if _, err := os.Stat(ProposalDir(tr.Project, "b")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ApprovedText made a folder for b: %v", err)
	}
	if text, _, err := ReadProposal(e); err != nil || text != proposalText {
		t.Fatalf("ReadProposal: %q %v", text, err)
	}
	d, err := Approve(tr, "a", op, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Verdict != Approved || d.By != op.AgentID || d.Edited || d.SHA256 != e.Record.SHA256 || len(d.Scope) != 2 {
		t.Fatalf("decision: %+v", d)
	}
	if l := tr.ReadLease(held.Rel); l.Awaiting != model.AwaitResume {
		t.Fatalf("lease: %+v", l)
	}
	if _, err := Approve(tr, "a", op, nil); !errors.Is(err, ErrNotWaiting) {
		t.Fatalf("second approval: %v", err)
	}
	turn, err := NextTurn(tr.Project, "a")
	if err != nil || turn.Plan || turn.ApprovedPlan != filepath.Join(ProposalDir(tr.Project, "a"), "1.md") {
		t.Fatalf("turn: %+v %v", turn, err)
	}
	if text, err := ApprovedText(tr.Project, "a"); err != nil || text != proposalText {
		t.Fatalf("ApprovedText: %q %v", text, err)
	}
	inbox, _ = Inbox(tr)
	if len(inbox) != 1 || inbox[0].Decision == nil || inbox[0].Waiting() {
		t.Fatalf("decided entry: %+v", inbox)
	}
	if !lastEvent(t, tr, "approved", op.AgentID) {
		t.Fatal("no approved event by the operator")
	}
}

func TestApproveEdited(t *testing.T) {
	tr, _ := waitingTree(t)
	edit := []byte("# Plan for a, tighter\n\n## Files in scope\n- src/a.go\n")
	d, err := Approve(tr, "a", op, edit)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Edited || strings.Join(d.Scope, ",") != "src/a.go" || filepath.Base(d.Text) != "1.approved.md" {
		t.Fatalf("decision: %+v", d)
	}
	turn, err := NextTurn(tr.Project, "a")
	if err != nil || filepath.Base(turn.ApprovedPlan) != "1.approved.md" {
		t.Fatalf("turn: %+v %v", turn, err)
	}
	got, _ := os.ReadFile(turn.ApprovedPlan)
	if string(got) != string(edit) {
		t.Fatalf("approved text %q", got)
	}
	// Approved text changed afterwards: the build refuses it.
	os.WriteFile(turn.ApprovedPlan, []byte("something else\n"), 0o644)
	if _, err := NextTurn(tr.Project, "a"); err == nil || !strings.Contains(err.Error(), "changed since") {
		t.Fatalf("changed approved text: %v", err)
	}
}

func TestReject(t *testing.T) {
	tr, held := waitingTree(t)
	if _, err := Reject(tr, "a", "  ", op); err == nil {
		t.Fatal("rejected without a note")
	}
	d, err := Reject(tr, "a", "split it in two", op)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(d.Feedback); string(b) != "split it in two\n" {
		t.Fatalf("feedback %q", b)
	}
	turn, err := NextTurn(tr.Project, "a")
	if err != nil || !turn.Plan || turn.N != 2 || turn.Feedback != d.Feedback {
		t.Fatalf("turn: %+v %v", turn, err)
	}
	if !lastEvent(t, tr, "rejected", op.AgentID) {
		t.Fatal("no rejected event")
	}
	// The agent resumes and plans again: proposal 2 waits.
	c, err := tr.Resume(held.Rel, "w", 60, false)
	if err != nil {
		t.Fatal(err)
	}
	writeProposal(t, tr, c, 2, proposalText+"\nSplit.\n")
	inbox, _ := Inbox(tr)
	if len(inbox) != 1 || inbox[0].N != 2 || !inbox[0].Waiting() {
		t.Fatalf("inbox after the second plan turn: %+v", inbox)
	}
}

// Text changed after the driver recorded it (by another process) is not
// what the agent wrote; it is refused and the inbox says why.
func TestApproveRefusesChangedProposal(t *testing.T) {
	tr, _ := waitingTree(t)
	p := filepath.Join(ProposalDir(tr.Project, "a"), "1.md")
	if out, err := exec.Command("sh", "-c", "echo '- /etc/' >> "+p).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	_, err := Approve(tr, "a", op, nil)
	if err == nil || !strings.Contains(err.Error(), "changed since w wrote it") {
		t.Fatalf("approve: %v", err)
	}
	inbox, _ := Inbox(tr)
	if len(inbox) != 1 || !strings.Contains(inbox[0].Problem, "changed since") {
		t.Fatalf("inbox: %+v", inbox)
	}
	if l := tr.ReadLease("in-progress/a.md"); l.Awaiting != model.AwaitApproval {
		t.Fatal("a refused approval changed the lease")
	}
}

func TestApproveRefusesMissingRecord(t *testing.T) {
	tr, _ := waitingTree(t)
	os.Remove(filepath.Join(ProposalDir(tr.Project, "a"), "1.json"))
	if _, err := Approve(tr, "a", op, nil); err == nil || !strings.Contains(err.Error(), "no authorship record") {
		t.Fatalf("approve: %v", err)
	}
	// A record by someone else is no better.
	if _, err := RecordProposal(tr.Project, Record{Slug: "a", N: 1, AgentID: "intruder"}); err != nil {
		t.Fatal(err)
	}
	if _, err := Approve(tr, "a", op, nil); err == nil || !strings.Contains(err.Error(), "not this plan's agent w") {
		t.Fatalf("approve: %v", err)
	}
}

func TestApproveRefusesSelfAndReadOnly(t *testing.T) {
	tr, _ := waitingTree(t)
	if _, err := Approve(tr, "a", Approver{AgentID: "w"}, nil); err == nil || !strings.Contains(err.Error(), "self-approval") {
		t.Fatalf("self-approval: %v", err)
	}
	if _, err := Approve(tr, "a", Approver{AgentID: "viewer", ReadOnly: true}, nil); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("read-only approve: %v", err)
	}
	if _, err := Reject(tr, "a", "no", Approver{AgentID: "viewer", ReadOnly: true}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("read-only reject: %v", err)
	}
	if _, err := Approve(tr, "b", op, nil); !errors.Is(err, ErrNotWaiting) {
		t.Fatalf("unknown slug: %v", err)
	}
}

// Racing approvers and rejecters, each with its own view of the tree: one
// decision, the rest told nothing waits.
func TestRacingApproversOneDecision(t *testing.T) {
	tr, _ := waitingTree(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine, err := planfs.Open(tr.Project)
			if err != nil {
				errs[i] = err
				return
			}
			by := Approver{AgentID: "op-" + string(rune('a'+i))}
			if i%2 == 0 {
				_, errs[i] = Approve(mine, "a", by, nil)
			} else {
				_, errs[i] = Reject(mine, "a", "no", by)
			}
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrNotWaiting):
			t.Errorf("loser: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d decisions", won)
	}
	decided := 0
	evs, _ := tr.Events()
	for _, e := range evs {
		if e.Event == Approved || e.Event == Rejected {
			decided++
		}
	}
	if decided != 1 {
		t.Fatalf("%d decision events", decided)
	}
}

func TestRecordProposalRefusals(t *testing.T) {
	tr, _ := waitingTree(t)
	dir := ProposalDir(tr.Project, "a")
	os.WriteFile(filepath.Join(dir, "2.md"), nil, 0o644)
	if _, err := RecordProposal(tr.Project, Record{Slug: "a", N: 2, AgentID: "w"}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("empty: %v", err)
	}
	os.Remove(filepath.Join(dir, "2.md"))
	os.Symlink("/etc/passwd", filepath.Join(dir, "2.md"))
	if _, err := RecordProposal(tr.Project, Record{Slug: "a", N: 2, AgentID: "w"}); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("symlink: %v", err)
	}
	os.Remove(filepath.Join(dir, "2.md"))
	os.WriteFile(filepath.Join(dir, "2.md"), make([]byte, MaxProposal+1), 0o644)
	if _, err := RecordProposal(tr.Project, Record{Slug: "a", N: 2, AgentID: "w"}); err == nil || !strings.Contains(err.Error(), "2.md") {
		t.Fatalf("too big: %v", err)
	}
	if _, err := RecordProposal(tr.Project, Record{Slug: "a", N: 3, AgentID: "w"}); err == nil {
		t.Fatal("missing proposal recorded")
	}
}

func TestResumable(t *testing.T) {
	tr, _ := waitingTree(t)
	snap, _ := tr.Scan()
	me := model.Worker{AgentID: "w", Tier: model.Mid}
	other := model.Worker{AgentID: "x", Tier: model.Mid}
	opt := model.Options{Now: tr.NowSeconds()}
	none := func(string) bool { return false }
	if _, _, ok := Resumable(tr, snap, me, opt, 60, none); ok {
		t.Fatal("resumable before a decision")
	}
	if _, err := Approve(tr, "a", op, nil); err != nil {
		t.Fatal(err)
	}
	snap, _ = tr.Scan()
	if rel, take, ok := Resumable(tr, snap, me, opt, 60, none); !ok || take || rel != "in-progress/a.md" {
		t.Fatalf("own: %q %v %v", rel, take, ok)
	}
	if _, _, ok := Resumable(tr, snap, other, opt, 60, none); ok {
		t.Fatal("another worker within the TTL")
	}
	later := opt
	later.Now += 120
	if rel, take, ok := Resumable(tr, snap, other, later, 60, none); !ok || !take || rel != "in-progress/a.md" {
		t.Fatalf("gone agent: %q %v %v", rel, take, ok)
	}
	if _, _, ok := Resumable(tr, snap, other, later, 60, func(string) bool { return true }); ok {
		t.Fatal("took over from a running driver")
	}
}

func lastEvent(t *testing.T, tr *planfs.Tree, name, agent string) bool {
	t.Helper()
	evs, err := tr.Events()
	if err != nil || len(evs) == 0 {
		t.Fatal(err)
	}
	e := evs[len(evs)-1]
	return e.Event == name && e.AgentID == agent
}
