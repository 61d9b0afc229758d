package gitclaims

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/overlap"
)

// Most of these tests wait on git processes and lease clocks.
func TestMain(m *testing.M) {
	overlap.Default(4)
	m.Run()
}
