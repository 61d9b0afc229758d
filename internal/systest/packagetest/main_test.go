package packagetest

import (
	"os"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
)

// The release, the root dpkg installs into and the demo's project are
// written into temp folders (and go build links in one): on tmpfs, not
// the disk (testkit.MemTemp). No agent runs contained here.
func TestMain(m *testing.M) {
	removeTemp := testkit.MemTemp()
	code := m.Run()
	removeTemp()
	os.Exit(code)
}
