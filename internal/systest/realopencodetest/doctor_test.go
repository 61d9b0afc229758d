package realopencodetest

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/agentkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// `doctor --live` runs the real opencode, contained, against the built-in
// scripted API, and says it worked.
func TestDoctorLiveRunsOpencode(t *testing.T) {
	t.Parallel()
	fwtest.NeedLandlock(t, 4)
	bin := fwtest.RealAgent(t, "opencode")
	dir := fwtest.GitRepo(t)
	agentkit.WriteFile(t, dir, "endpoints.yaml", "endpoints:\n  - name: oc\n    tier: mid\n    model: anthropic/claude-sonnet-4-5\n    agent: opencode\n")
	path := "PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")
	r := fwtest.RunEnv(t, dir, []string{"HOME=" + t.TempDir(), path}, "doctor", "--live")
	for _, ep := range []string{"oc \\(opencode\\)"} {
		ok := regexp.MustCompile(`(?m)^ok +live ` + ep + `: started, edited and committed contained, metered \d+ tokens as the API sent, exited 0 in `)
		if r.Code != 0 || !ok.MatchString(r.Stdout) {
			t.Errorf("doctor --live with %s: %v", ep, r)
		}
	}
}
