// Package crashtest kills fleetwatch at every step of its verbs (failpoints)
// and checks that the next run repairs or undoes what was cut short, alone and
// beside anchor's own workers.
package crashtest

import (
	"testing"

	"fleetwatch/ui/cli"
	"fleetwatch/internal/testkit/fwtest"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
