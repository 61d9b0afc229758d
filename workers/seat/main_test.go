package seat

import (
	"os"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
)

func TestMain(m *testing.M) {
	removeTemp := testkit.MemTemp()
	code := m.Run()
	removeTemp()
	os.Exit(code)
}
