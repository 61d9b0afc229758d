package remotetest

import (
	"os"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// TestVerbsThroughGit: --list shows another machine's lease as held on its
// host and says how old the view is; --heartbeat and --release work for the
// holder only; --park moves the plan on the remote's main.
func TestVerbsThroughGit(t *testing.T) {
	t.Parallel()
	f := NewFleet(t, Plans(2)...)
	a, b := f.Clone(t, f.Bare), f.Clone(t, f.Bare)
	NeedBackend(t, a)
	host, _ := os.Hostname()
	r := fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "w1", "--slug", "p000")
	if r.Code != 0 || !strings.HasSuffix(strings.TrimSpace(r.Stdout), "bugs/p000.md") {
		t.Fatalf("named claim: %v", r)
	}
	l := List(t, b, "w2")
	if l.ViewReadAt == "" || l.Claims != "git" {
		t.Errorf("--list --json: claims %q, view_read_at %q", l.Claims, l.ViewReadAt)
	}
	for _, p := range l.Plans {
		if p.Slug == "p000" && (p.Lease == nil || p.Lease.HeldOn != host || p.Lane != "in-progress") {
			t.Errorf("--list --json shows p000 as %+v, lease %+v", p, p.Lease)
		}
	}
	r = fwtest.Run(t, b, "work-once", "--root", b, "--agent-id", "w2", "--list")
	if r.Code != 0 || !strings.Contains(r.Stderr, "(held on "+host+")") || !strings.Contains(r.Stderr, "view read at") {
		t.Errorf("--list: %v", r)
	}
	// Someone else's lease: exit 2, naming the holder.
	r = fwtest.Run(t, b, "work-once", "--root", b, "--agent-id", "w2", "--heartbeat", "p000")
	if r.Code != 2 || !strings.Contains(r.Stderr, "held by w1") {
		t.Errorf("--heartbeat by another agent: %v", r)
	}
	before := f.Leases(t)["p000"]
	fwtest.Want(t, fwtest.Run(t, b, "work-once", "--root", b, "--agent-id", "w1", "--heartbeat", "bugs/p000.md"), 0)
	if after := f.Leases(t)["p000"]; after == before || after == "" {
		t.Errorf("--heartbeat left the lease ref at %s (was %s)", after, before)
	}
	r = fwtest.Run(t, b, "work-once", "--root", b, "--agent-id", "w1", "--release", "p000")
	if r.Code != 0 || !strings.Contains(r.Stdout, "released") || f.Leases(t)["p000"] != "" {
		t.Errorf("--release: %v (lease refs %v)", r, f.Leases(t))
	}
	fwtest.Want(t, fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "w1", "--park", "blocked", "--slug", "p001"), 0)
	files := gitIn(t, f.Bare, nil, "ls-tree", "-r", "--name-only", "HEAD")
	if !strings.Contains(files, ".plans/blocked/p001.md") {
		t.Errorf("--park: the remote's main holds\n%s", files)
	}
}
