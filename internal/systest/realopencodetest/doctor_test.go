package realopencodetest

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"fleetwatch/internal/testkit/fwtest"
)

// `doctor --live` runs the real opencode and qwen-code, contained, against
// the built-in scripted API, and says each worked.
func TestDoctorLiveRunsThem(t *testing.T) {
	t.Parallel()
	fwtest.NeedLandlock(t, 4)
	oc, qw := fwtest.RealAgent(t, "opencode"), fwtest.RealAgent(t, "qwen")
	dir := fwtest.GitRepo(t)
	writeFile(t, dir, "endpoints.yaml", "endpoints:\n  - name: oc\n    tier: mid\n    model: anthropic/claude-sonnet-4-5\n    agent: opencode\n"+
		"  - name: qw\n    tier: mid\n    model: qwen3-coder-plus\n    agent: qwen\n")
	path := "PATH=" + filepath.Dir(oc) + string(os.PathListSeparator) + filepath.Dir(qw) + string(os.PathListSeparator) + os.Getenv("PATH")
	r := fwtest.RunEnv(t, dir, []string{"HOME=" + t.TempDir(), path}, "doctor", "--live")
	for _, ep := range []string{"oc \\(opencode\\)", "qw \\(qwen\\)"} {
		ok := regexp.MustCompile(`(?m)^ok +live ` + ep + `: started, edited and committed contained, metered \d+ tokens as the API sent, exited 0 in `)
		if r.Code != 0 || !ok.MatchString(r.Stdout) {
			t.Errorf("doctor --live with %s: %v", ep, r)
		}
	}
}
