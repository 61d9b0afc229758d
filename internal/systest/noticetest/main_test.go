package noticetest

import (
	"testing"

	"fleetwatch/internal/testkit/fwtest"
	"fleetwatch/ui/cli"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
