package realgeminitest

import (
	"regexp"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/systest/landkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// `doctor --live` runs the endpoint's real Gemini CLI, contained, against
// the built-in scripted API, and says it worked: for an API-key user whose
// settings choose that auth type, and for one who never ran Gemini CLI
// (no settings: 0.61.0 would take a set GOOGLE_GEMINI_BASE_URL for a
// "gateway" login it refuses, exit 41, but the driver writes the settings
// its first run would, choosing the key's login).
func TestDoctorLiveRunsGeminiCLI(t *testing.T) {
	t.Parallel()
	fwtest.NeedLandlock(t, 4)
	gemini := fwtest.RealAgent(t, "gemini")
	dir := fwtest.GitRepo(t)
	landkit.Write(t, dir, "endpoints.yaml", endpoint(""))
	ok := regexp.MustCompile(`(?m)^ok +live g \(gemini\): started, edited and committed contained, metered \d+ tokens as the API sent, exited 0 in `)
	for name, home := range map[string]string{"with settings": geminiHome(t, nil), "a new user": t.TempDir()} {
		r := fwtest.RunEnv(t, dir, geminiEnv(gemini, home), "doctor", "--live")
		if r.Code != 0 || !ok.MatchString(r.Stdout) {
			t.Errorf("doctor --live with the real Gemini CLI, %s: %v", name, r)
		}
	}
}
