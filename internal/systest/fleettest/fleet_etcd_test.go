//go:build etcd

package fleettest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/systest/remotetest"
)

// TestFleetAcrossMachinesOnEtcd is the scenario with the claims (and the
// worker records) in an embedded etcd: each record rides its worker's
// session lease, so a killed worker's record goes with it.
func TestFleetAcrossMachinesOnEtcd(t *testing.T) {
	if endpoint == "" {
		t.Skip(skipReason)
	}
	f := remotetest.NewFleet(t, remotetest.Plans(3)...)
	a, b, c := f.Clone(t, f.Bare), f.Clone(t, f.Bare), f.Clone(t, f.Bare)
	yaml := fmt.Sprintf("claims:\n  backend: etcd\n  remote: origin\n  project: fleet-%d\n  endpoints: [%s]\n", os.Getpid(), endpoint)
	for _, dir := range []string{a, b, c} {
		if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	acrossMachines(t, a, b, c, false)
}
