// Package gitsteertest runs agents that try to steer the driver's own git
// through what they can write (their worktree's .git, their git store)
// under a real `work-once --run` driver with real git and Landlock: none
// of it may run code as the driver, hang it, or hand the agent the
// project's remote.
package gitsteertest

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
