// Package containtest runs a hostile agent under a real `work-once --run`
// driver: each of its attacks on the operator's gate must fail, and its
// honest work must still land on its branch.
package containtest

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
