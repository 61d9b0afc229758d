package cli

import (
	"testing"

	"fleetwatch/internal/testkit/fwtest"
)

func TestMain(m *testing.M) { fwtest.Main(m, Main) }
