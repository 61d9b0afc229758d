// Package windowtest runs whole-program tests of failures that are not the
// task's: a real Claude Code run that meets a spent usage window hands its
// plan to another endpoint at once and shuts its own until the reset, and
// a task that keeps failing is handed back each time, then parked.
package windowtest

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
