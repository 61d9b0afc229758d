package demo

import (
	"os"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
)

// Each test writes a demo project (its git history included) into a temp
// folder: on tmpfs that costs a fraction of what it does on the disk.
// No test here contains an agent (see testkit.MemTemp).
func TestMain(m *testing.M) {
	removeTemp := testkit.MemTemp()
	code := m.Run()
	removeTemp()
	os.Exit(code)
}
