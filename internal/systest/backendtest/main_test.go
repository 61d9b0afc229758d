// Package backendtest runs whole fleetwatch processes against a real
// backend: a PostgreSQL server the tests start in a temporary folder, where
// each worker's `worktree:` setup creates its own database.
package backendtest

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
