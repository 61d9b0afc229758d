// Package realagenttest runs the real agent CLIs, installed from npm, under
// a real `work-once --run` driver, contained, against a scripted model API
// on loopback: the sandbox must not stop the work a real agent does.
package realagenttest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
