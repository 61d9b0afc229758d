// Package queuetest runs the merge queue's listing, order and `queue run` as
// real fleetwatch processes: add and remove, speculative checks, hotfix, P1,
// max_wait and dependency order, queue run's landing and its stop on SIGTERM.
package queuetest

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
