// Package runtest runs real `work-once --run` drivers with a stand-in agent:
// hand-off, worktrees, stopping, fencing, no-commit runs and peer reviews.
package runtest

import (
	"testing"

	"fleetwatch/ui/cli"
	"fleetwatch/internal/testkit/fwtest"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
