// Package realqwentest runs the real qwen-code CLI, installed from npm,
// under a real fleetwatch driver, contained, against a scripted model API
// on loopback: its preset's build, review and plan turns, metering, its
// session resumed, and what its output says of an API's faults.
package realqwentest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
