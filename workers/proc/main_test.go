package proc

import (
	"os"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
)

func TestMain(m *testing.M) {
	removeTemp := testkit.MemTemp()
	code := m.Run()
	testkit.RemoveFakeDriver()
	removeTemp()
	os.Exit(code)
}
