// Package gatetest holds the landing gate to what it checked itself, as real
// fleetwatch processes: checks read from the integration branch, forged check
// records and caches refused, approvals bound to the approved content, and
// the integration branch moved or renamed outside the queue noticed.
package gatetest

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
