package ui

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/planfs/claims/gitclaims"
)

// Against a real bare remote: a worker on another clone claims through
// gitclaims; the UI of the operator's checkout shows the plan in progress,
// "held on" the worker's host, and its release goes to the remote.
func TestGitRemoteLeaseShownAndReleased(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	bare, worker, h := gitRemoteFleet(t, p, claims.Holder{AgentID: "small-9", Host: "gpu-box", PID: 4242})
	ctx := context.Background()
	if h.m.feed.claims().err != nil {
		t.Fatalf("reading the remote: %v", h.m.feed.claims().err)
	}
	head := strings.SplitN(h.view(), "\n", 2)[0]
	if !strings.Contains(head, "claims: git origin · read ") {
		t.Errorf("header lacks the claims backend: %q", head)
	}
	h.selectPlan("in-progress/crash-on-save.md")
	if v := h.view(); !strings.Contains(v, "small-9") || !strings.Contains(v, "held on gpu-box") {
		t.Fatalf("the remote claim is not shown held on its host:\n%s", v)
	}
	h.press("r")
	if !h.dialogOpen() {
		t.Fatalf("r opened no dialog: %s", h.footer())
	}
	h.press("enter")
	if f := h.footer(); !strings.Contains(f, "released crash-on-save") {
		t.Fatalf("release of the remote lease: %s", f)
	}
	after, err := worker.View(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r := after.Lease("crash-on-save"); r != nil {
		t.Errorf("the lease is still on the remote after the UI released it: %+v", r)
	}
	if !h.m.planExists("bugs/crash-on-save.md") {
		t.Fatalf("after the release the UI does not show crash-on-save ready again: %v", h.rows())
	}

	// A park's reason goes with the move, into its commit on the remote.
	h.selectPlan("bugs/crash-on-save.md")
	h.press("a")
	if d := h.m.dialogShown(); d == nil || d.Input == nil {
		t.Fatalf("a opened no dialog with a reason: %s", h.footer())
	}
	h.typeText("waits on the vendor fix")
	h.press("enter")
	if f := h.footer(); !strings.Contains(f, "parked crash-on-save") {
		t.Fatalf("park through the remote: %s", f)
	}
	out, err := exec.Command("git", "-C", bare, "log", "-1", "--format=%B", "main").Output()
	if err != nil || !strings.Contains(string(out), "waits on the vendor fix") {
		t.Errorf("the park's commit on the remote says %q (%v)", out, err)
	}
}

// gitRemoteFleet gives p a bare remote, a worker's clone of it where holder
// claims bugs/crash-on-save.md through gitclaims, and the operator's
// harness reading claims from that remote. It returns the remote, the
// worker's backend and the harness.
func gitRemoteFleet(t *testing.T, p *project, holder claims.Holder) (bare string, worker *gitclaims.Backend, h *harness) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git program: ", err)
	}
	bare = filepath.Join(p.root, "remote.git")
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
	if _, err := worker.Claim(ctx, v, "bugs/crash-on-save.md", holder, 15*time.Minute); err != nil {
		t.Fatal(err)
	}
	ours, err := gitclaims.Open(claims.Config{Backend: "git", Project: p.dir, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// The remote's reads are stamped with the real clock: so is this tree.
	p.tree.Now = time.Now
	opt := p.options()
	opt.Claims = &claims.Opened{Backend: ours, Where: "git origin"}
	return bare, worker, newHarnessWith(t, p, opt, 120, 32)
}
