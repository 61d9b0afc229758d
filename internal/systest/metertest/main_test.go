// Package metertest runs real metered workers against a scripted model
// server that tries to turn their metering down or off: counts below zero
// or past any model's, a stream that reports no usage unless asked, an
// answer too big to hold, an answer of a shape nobody reads. Whatever it
// answers, the run, its plan and the day are counted, never less than
// nothing, and a call whose usage cannot be read is estimated and says so.
package metertest

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
