// Package losttest ends contained agents' runs every way a run can end —
// a non-zero exit, a scope stop, kill -9 of their driver — under a real
// `work-once --run` driver and real git: their commits must reach the
// project's branch, and nothing of a dead driver's run may work on.
package losttest

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
