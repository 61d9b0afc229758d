//go:build etcd

package capstest

import (
	"fmt"
	"os"
	"testing"

	"fleetwatch/internal/testkit/etcdtest"
	"fleetwatch/internal/testkit/fwtest"
	"fleetwatch/ui/cli"
)

// endpoint is the embedded etcd's client URL; "" when it could not start
// (skipReason says why).
var endpoint, skipReason string

// TestMain starts one embedded etcd on loopback for the package's tests;
// the test binary run as fleetwatch starts none.
func TestMain(m *testing.M) {
	if os.Getenv(fwtest.AsFleetwatch) == "1" {
		fwtest.Main(m, cli.Main)
		return
	}
	dir, err := os.MkdirTemp("", "capstest-etcd-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var stop func()
	endpoint, skipReason, stop = etcdtest.Start(dir, false)
	fwtest.Main(m, cli.Main, stop, func() { os.RemoveAll(dir) })
}
