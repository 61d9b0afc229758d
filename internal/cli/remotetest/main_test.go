package remotetest

import (
	"testing"

	"fleetwatch/internal/cli"
	"fleetwatch/internal/testkit/fwtest"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
