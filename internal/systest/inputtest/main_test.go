// Package inputtest feeds fleetwatch bad and hostile input (broken plans,
// symlinks, read-only trees, escape sequences in names) and checks each gets a
// one-line error and nothing is lost or printed raw.
package inputtest

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
