// Package firsthourtest holds the whole-program tests of a newcomer's first
// hour: scaffold's files, the agent presets, doctor, the manual's topics and
// the suggestions for a mistyped command or flag.
package firsthourtest

import (
	"testing"

	"fleetwatch/ui/cli"
	"fleetwatch/internal/testkit/fwtest"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
