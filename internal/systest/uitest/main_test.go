// Package uitest runs the whole program in a real terminal (tmux) and checks
// the board's text: what an operator sees and the keys they press.
package uitest

import (
	"testing"

	"fleetwatch/ui/cli"
	"fleetwatch/internal/testkit/fwtest"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
