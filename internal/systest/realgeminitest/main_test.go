// Package realgeminitest runs the real Gemini CLI, installed from npm,
// under a real driver, contained, against a scripted Gemini API on
// loopback: its build, review and plan turns, and the faults it reports.
package realgeminitest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
