package workers

import (
	"os"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.RemoveFakeDriver()
	os.Exit(code)
}
