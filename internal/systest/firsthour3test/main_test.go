// Package firsthour3test holds the whole-program tests of the first hour's
// second pass (issue 40): what the demo offers and what the numbers say.
package firsthour3test

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
