// Package realcodextest runs the real Codex CLI, installed from npm, under
// real fleetwatch drivers, contained, against modelapi's Responses API on
// loopback: its build, review and plan turns do their work, and the usage
// fleetwatch records is what the API sent.
package realcodextest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
