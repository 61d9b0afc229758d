//go:build !etcd

// Package fleettest runs the real fleetwatch binary on several "machines"
// (clones of one bare remote, each with its own var/ and FLEET_HOST),
// whose workers publish their records through the git claims backend: one
// machine sees them all, a killed one goes stale then dead on its clock,
// and a stop asked from one machine stops a worker on another.
package fleettest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
