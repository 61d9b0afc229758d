// Package realopencodetest runs the real opencode and qwen-code CLIs,
// installed from npm, under a real fleetwatch driver, contained, against a
// scripted model API on loopback: their presets' build, review and plan
// turns, metering, and what their output says of an API's faults.
package realopencodetest

import (
	"testing"

	"fleetwatch/internal/testkit/fwtest"
	"fleetwatch/ui/cli"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
