//go:build etcd

// Package fleettest runs the real fleetwatch binary on several "machines"
// (clones of one bare remote, each with its own var/ and FLEET_HOST),
// whose workers publish their records through the claims backend (git,
// and with -tags etcd an embedded etcd too).
package fleettest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/etcdtest"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

// endpoint is the embedded etcd's client URL; "" when it could not start.
var endpoint, skipReason string

func TestMain(m *testing.M) {
	etcdtest.Main(m, "fleettest", cli.Main, func(e, skip string) { endpoint, skipReason = e, skip })
}
