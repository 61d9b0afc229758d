package workers

import (
	"os"
	"testing"

	"fleetwatch/internal/sandbox"
	"fleetwatch/internal/testkit"
)

func TestMain(m *testing.M) {
	sandbox.Main()
	code := m.Run()
	testkit.RemoveFakeDriver()
	os.Exit(code)
}
