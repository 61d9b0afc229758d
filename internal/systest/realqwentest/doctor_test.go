package realqwentest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/agentkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// `doctor --live` runs the real qwen, contained, against the built-in
// scripted API, and says it worked.
func TestDoctorLiveRunsQwen(t *testing.T) {
	t.Parallel()
	fwtest.NeedLandlock(t, 4)
	agentkit.DoctorLive(t, "qwen", fwtest.RealAgent(t, "qwen"))
}
