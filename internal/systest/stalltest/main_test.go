// Package stalltest runs hostile agents under a real `work-once --run`
// driver: nothing an agent writes may stall the driver (a FIFO where a
// file is read), and no usage it reports of itself may stop the fleet.
package stalltest

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
