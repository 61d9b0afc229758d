package demo

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/workers/coord"
)

// The demo's inbox holds reasoner-2's proposal for share-links, written
// and recorded as the driver does, so the coordinator can approve it.
func TestDemoInbox(t *testing.T) {
	t.Parallel()
	tr, _ := open(t)
	es, err := coord.Inbox(tr)
	if err != nil || len(es) != 1 {
		t.Fatalf("inbox %+v %v", es, err)
	}
	e := es[0]
	if e.Slug != "share-links" || e.Rel != "in-progress/share-links.md" || !e.Waiting() || e.N != 1 || e.Problem != "" {
		t.Fatalf("entry %+v", e)
	}
	if e.Record == nil || e.Record.AgentID != "reasoner-2" || !e.Record.At.Equal(demoNow.Add(-35*time.Minute)) {
		t.Errorf("record %+v", e.Record)
	}
	if !e.ScopeFound || strings.Join(e.Scope.Patterns, " ") != "share.go share_test.go main.go web/share.html" {
		t.Errorf("scope %+v found %v", e.Scope, e.ScopeFound)
	}
	if want := filepath.Join(tr.Project, "var/fleet/run/proposals/share-links/1.md"); e.Proposal != want {
		t.Errorf("proposal at %s, want %s", e.Proposal, want)
	}
	d, err := coord.Approve(tr, "share-links", coord.Approver{AgentID: "operator"}, nil)
	if err != nil || d.Verdict != coord.Approved {
		t.Fatalf("approve: %+v %v", d, err)
	}
	if l := tr.ReadLease("in-progress/share-links.md"); l == nil || l.Awaiting != model.AwaitResume || l.AgentID != "reasoner-2" {
		t.Errorf("lease after approval %+v", l)
	}
	if st := gitOut(t, tr.Project, "status", "--porcelain"); st != "" {
		t.Errorf("the inbox's files should be ignored by git:\n%s", st)
	}
}

// Under FLEET_MODE=plan the stand-in writes a proposal with a Files in
// scope section and nothing else; with a rejection's note it says so.
func TestAgentPlans(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	planPath := filepath.Join(dir, "share-links.md")
	if err := os.WriteFile(planPath, []byte(sampleFile(t, "project/plans/features/share-links.md")), 0o644); err != nil {
		t.Fatal(err)
	}
	feedback := filepath.Join(dir, "feedback-1.md")
	if err := os.WriteFile(feedback, []byte("Revoke links from the note's page too.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	proposal := filepath.Join(dir, "proposals", "share-links", "2.md")
	env := AgentEnv{Plan: planPath, Worktree: dir, AgentID: "reasoner-2", Slug: "share-links", Mode: "plan", Proposal: proposal, Feedback: feedback}
	var out bytes.Buffer
	if err := Agent(env, &out, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(proposal)
	if err != nil {
		t.Fatal(err)
	}
	s, found, warns := model.ParseScope(string(text))
	if !found || len(warns) > 0 || strings.Join(s.Patterns, " ") != "changes/share-links.md" {
		t.Errorf("scope %+v found %v warnings %v in:\n%s", s, found, warns, text)
	}
	if !strings.Contains(string(text), "Revoke links from the note's page too.") || !strings.Contains(out.String(), "waiting for approval") {
		t.Errorf("proposal:\n%s\noutput:\n%s", text, out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "changes")); !os.IsNotExist(err) {
		t.Errorf("a plan turn wrote a change: %v", err)
	}
	env.Proposal = ""
	if err := Agent(env, &out, time.Millisecond); err == nil || !strings.Contains(err.Error(), "FLEET_PROPOSAL") {
		t.Errorf("a plan turn without FLEET_PROPOSAL: %v", err)
	}
}
