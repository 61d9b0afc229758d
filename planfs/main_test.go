package planfs

import (
	"os"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
)

func TestMain(m *testing.M) {
	removeTemp := testkit.MemTemp()
	code := m.Run()
	benchTrees.Remove()
	removeTemp()
	os.Exit(code)
}
