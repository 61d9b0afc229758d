// Package egresstest runs a hostile agent under a real `work-once --run`
// driver and tries the network around its driver: a direct call to its
// model, a push to the fleet's git remote, an abstract socket of the
// operator's; each must fail, and the egress proxy must let through only
// the hosts fleetwatch.yaml allows.
package egresstest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/overlap"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) {
	overlap.Default(4)
	fwtest.Main(m, cli.Main)
}
