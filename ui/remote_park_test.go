package ui

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fleetwatch/claims"
	"fleetwatch/claims/gitclaims"
)

// The UI's park of a plan another machine leases is the CLI's one call
// (claims.Act): the plan moves and its lease goes in one commit on the
// remote, and no worker is left holding a parked plan.
func TestGitRemoteParkOfALeasedPlanIsOneStep(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git program: ", err)
	}
	p := newProject(t)
	bare := filepath.Join(p.root, "remote.git")
	p.git(t, 0, "init", "-q", "--bare", "-b", "main", bare)
	p.git(t, 0, "remote", "add", "origin", bare)
	p.git(t, 0, "push", "-q", "origin", "main")
	clone := filepath.Join(p.root, "worker")
	p.git(t, 0, "clone", "-q", bare, clone)
	ctx := context.Background()
	worker, err := gitclaims.Open(claims.Config{Backend: "git", Project: clone, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	v, err := worker.View(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := worker.Claim(ctx, v, "bugs/crash-on-save.md", claims.Holder{AgentID: "small-9", Host: "gpu-box"}, 15*time.Minute); err != nil {
		t.Fatal(err)
	}
	before, _ := exec.Command("git", "-C", bare, "rev-parse", "main").Output()
	ours, err := gitclaims.Open(claims.Config{Backend: "git", Project: p.dir, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	p.tree.Now = time.Now
	opt := p.options()
	opt.Claims = &claims.Opened{Backend: ours, Where: "git origin"}
	h := newHarnessWith(t, p, opt, 120, 32)
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
