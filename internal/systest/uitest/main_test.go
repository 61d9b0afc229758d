// Package uitest runs the whole program in a real terminal (tmux) and checks
// the board's text: what an operator sees and the keys they press.
package uitest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) { fwtest.MainInMemory(m, cli.Main) }
