// Package watchtest runs `fleetwatch watch` and its schedulers' units, and the
// review watch, through the built fleetwatch.
package watchtest

import (
	"testing"

	"fleetwatch/ui/cli"
	"fleetwatch/internal/testkit/fwtest"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
