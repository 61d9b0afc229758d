// Package reviewtest runs review as real fleetwatch processes on real git
// repositories: a person's approve, needs-work and defer, peer reviews by
// other agents (accepted, revised, refused when they write, timed out),
// approvals going stale, and the review ledger.
package reviewtest

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
