// Package containtest runs a hostile agent under a real `work-once --run`
// driver: each of its attacks on the operator's gate must fail, and its
// honest work must still land on its branch.
package containtest

import (
	"testing"

	"fleetwatch/ui/cli"
	"fleetwatch/internal/testkit/fwtest"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
