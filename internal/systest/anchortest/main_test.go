// Package anchortest runs the built fleetwatch as anchor's users do: work-
// once's picks, --list and its JSON against anchor's protocol and its test
// suite's assertions, and the speed of a listing on large trees.
package anchortest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/overlap"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) {
	overlap.Default(4)
	fwtest.Main(m, cli.Main, benchTrees.Remove)
}
