package planfs

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	benchTrees.Remove()
	os.Exit(code)
}
