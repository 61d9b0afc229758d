//go:build etcd

// Package fleettest runs the real fleetwatch binary on several "machines"
// (clones of one bare remote, each with its own var/ and FLEET_HOST),
// whose workers publish their records through the claims backend (git,
// and with -tags etcd an embedded etcd too).
package fleettest

import (
	"fmt"
	"os"
	"testing"

	"fleetwatch/internal/testkit/etcdtest"
	"fleetwatch/internal/testkit/fwtest"
	"fleetwatch/ui/cli"
)

// endpoint is the embedded etcd's client URL; "" when it could not start.
var endpoint, skipReason string

func TestMain(m *testing.M) {
	if os.Getenv(fwtest.AsFleetwatch) == "1" {
		fwtest.Main(m, cli.Main)
		return
	}
	dir, err := os.MkdirTemp("", "fleettest-etcd-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var stop func()
	endpoint, skipReason, stop = etcdtest.Start(dir, false)
	fwtest.Main(m, cli.Main, stop, func() { os.RemoveAll(dir) })
}
