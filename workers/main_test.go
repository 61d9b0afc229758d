package workers

import (
	"os"
	"testing"

	"fleetwatch/internal/testkit"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testkit.RemoveFakeDriver()
	os.Exit(code)
}
