package workers

import (
	"os"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
)

func TestMain(m *testing.M) {
	// The scope scanner looks every second in a real run; the tests wait
	// for its looks, so here it looks ten times as often (the knob is
	// there for them).
	scanEvery = 100 * time.Millisecond
	removeTemp := testkit.MemTemp()
	code := m.Run()
	testkit.RemoveFakeDriver()
	removeTemp()
	os.Exit(code)
}
