package realopencodetest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/agentkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// `doctor --live` runs the real opencode, contained, against the built-in
// scripted API, and says it worked.
func TestDoctorLiveRunsOpencode(t *testing.T) {
	t.Parallel()
	fwtest.NeedLandlock(t, 4)
	agentkit.DoctorLive(t, "opencode", fwtest.RealAgent(t, "opencode"))
}
