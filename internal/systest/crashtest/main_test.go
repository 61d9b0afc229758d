// Package crashtest kills fleetwatch at every step of its verbs (failpoints)
// and checks that the next run repairs or undoes what was cut short, alone and
// beside anchor's own workers.
package crashtest

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
