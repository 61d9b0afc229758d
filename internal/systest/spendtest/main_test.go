// Package spendtest runs real metered workers: a stand-in model endpoint
// behind each run's proxy, budgets that pause a run and an extension that
// resumes it, a stop that parks it with its spend, the operator's pause,
// and the ledger read back by `usage` and `report`.
package spendtest

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
