// Package batchtest runs the merge queue's batches as real fleetwatch
// processes: a batch checked once and swapped in once, its retry and
// bisection to the culprit, flaky checks, a lander killed after its swap,
// and two landers racing.
package batchtest

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
