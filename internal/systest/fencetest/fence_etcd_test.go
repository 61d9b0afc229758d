//go:build etcd

package fencetest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// TestFencedEtcdHolderNeverPushes is the scenario with claims in etcd and
// branches on the git remote: the stopped driver's session lease expires,
// the other clone's driver takes the plan, and the first, let go on,
// pushes nothing.
func TestFencedEtcdHolderNeverPushes(t *testing.T) {
	if endpoint == "" {
		t.Skip(skipReason)
	}
	bare, a, b := fleet(t)
	id := fmt.Sprintf("fence-%d", os.Getpid())
	for _, dir := range []string{a, b} {
		yaml := "claims:\n  backend: etcd\n  remote: origin\n  project: " + id + "\n  endpoints: [" + endpoint + "]\n"
		if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fwtest.Want(t, fwtest.Run(t, a, "work-once", "--root", a, "--agent-id", "obs", "--list"), 0)
	fencedHolder(t, bare, a, b, false)
}
