package ui

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// The UI's park of a plan another machine leases is the CLI's one call
// (claims.Act): the plan moves and its lease goes in one commit on the
// remote, and no worker is left holding a parked plan.
func TestGitRemoteParkOfALeasedPlanIsOneStep(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	bare, worker, h := gitRemoteFleet(t, p, claims.Holder{AgentID: "small-9", Host: "gpu-box"})
	ctx := context.Background()
	before, _ := exec.Command("git", "-C", bare, "rev-parse", "main").Output()
	h.selectPlan("in-progress/crash-on-save.md")
	h.press("a")
	if d := h.m.dialogShown(); d == nil {
		t.Fatalf("a opened no dialog: %s", h.footer())
	}
	h.typeText("vendor")
	h.press("enter")
	if f := h.footer(); !strings.Contains(f, "parked crash-on-save") || !strings.Contains(f, "lease of small-9 dropped") {
		t.Fatalf("park of a leased plan: %s", f)
	}
	after, err := worker.View(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r := after.Lease("crash-on-save"); r != nil || after.Snapshot.PlanAt("blocked/crash-on-save.md") == nil {
		t.Errorf("after the park: lease %+v", r)
	}
	n, _ := exec.Command("git", "-C", bare, "rev-list", "--count", strings.TrimSpace(string(before))+"..main").Output()
	if strings.TrimSpace(string(n)) != "1" {
		t.Errorf("%s commits for one park", n)
	}
}
