package proc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// A recover through Act over the lease files stops what the dead holder's
// driver left running on this host before the plan changes hands, as
// Recover does.
func TestActRecoverStopsTheDeadHoldersLeftovers(t *testing.T) {
	dir := t.TempDir()
	if _, err := planfs.Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".plans", "features", "a.md"), []byte("# a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tree, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := claims.NewLocal(tree)
	ctx := context.Background()
	v, err := b.View(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held, err := b.Claim(ctx, v, "features/a.md", claims.Holder{AgentID: "gone"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	expireLease(t, tree, held.Rel)
	left := exec.Command("sleep", "60")
	left.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- left.Wait() }()
	defer left.Process.Kill()
	agent := ProcOf(left.Process.Pid)
	if err := look.WriteState(dir, look.State{AgentID: "gone", Host: look.Hostname(), Agent: &agent}); err != nil {
		t.Fatal(err)
	}
	if v, err = b.View(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := Act(ctx, b, v, claims.Op{Verb: model.Recover, Slug: "a", Holder: claims.Holder{AgentID: "op"}, TTL: time.Minute})
	if err != nil || res.Holds == nil || res.Holds.Lease.AgentID != "op" {
		t.Fatalf("recover: %+v, %v", res, err)
	}
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("the dead holder's agent still runs after the recover")
	}
}

// expireLease rewrites rel's lease as expired long ago.
func expireLease(t *testing.T, tree *planfs.Tree, rel string) {
	t.Helper()
	testkit.ExpireLeaseFile(t, filepath.Join(tree.Plans, ".leases", model.LeaseFileName(rel)))
}
