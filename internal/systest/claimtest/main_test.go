// Package claimtest races many fleetwatch worker processes for one tree: every
// plan is claimed exactly once, a named plan by exactly one winner.
package claimtest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
