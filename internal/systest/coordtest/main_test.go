// Package coordtest runs the coordinator's flow end to end with the real
// binary and a fake agent that plans: a plan turn waits in the inbox,
// approve and reject decide, the next run builds or plans again, and a gone
// agent's approved plan is taken up by another worker.
package coordtest

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
