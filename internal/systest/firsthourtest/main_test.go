// Package firsthourtest holds the whole-program tests of a newcomer's first
// hour: scaffold's files, the agent presets, doctor, the manual's topics and
// the suggestions for a mistyped command or flag.
package firsthourtest

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
