package cli

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

func TestMain(m *testing.M) { fwtest.MainInMemory(m, Main) }
