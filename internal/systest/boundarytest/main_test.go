//go:build linux

// Package boundarytest runs an intruding agent, and an intruding check,
// under a real `work-once --run` driver and a real `queue land`, each in
// a real terminal: nothing they run may type into a person's terminal,
// make a device, hold a capability, outrun its process limit, wake itself
// from a pause or act as the person at the gate. Linux only: the
// boundaries are Landlock, capabilities and cgroups, which macOS lacks.
package boundarytest

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
