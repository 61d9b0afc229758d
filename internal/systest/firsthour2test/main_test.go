// Package firsthour2test holds the whole-program tests of the first hour's
// second pass: a landing that keeps the operator's checkout of the
// integration branch in step, accepting a move of one's own, and the
// integration branch scaffold asks for.
package firsthour2test

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
