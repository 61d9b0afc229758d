package realgeminitest

import (
	"regexp"
	"strings"
	"testing"

	"fleetwatch/internal/systest/landkit"
	"fleetwatch/internal/testkit/fwtest"
)

// `doctor --live` runs the endpoint's real Gemini CLI, contained, against
// the built-in scripted API, and says it worked, for an API-key user whose
// settings choose that auth type; with none chosen, Gemini CLI 0.61.0
// refuses the "gateway" login a set GOOGLE_GEMINI_BASE_URL makes it
// take, and doctor says so.
func TestDoctorLiveRunsGeminiCLI(t *testing.T) {
	t.Parallel()
	fwtest.NeedLandlock(t, 4)
	gemini := realGemini(t)
	dir := fwtest.GitRepo(t)
	landkit.Write(t, dir, "endpoints.yaml", endpoint(""))
	r := fwtest.RunEnv(t, dir, geminiEnv(gemini, geminiHome(t, nil)), "doctor", "--live")
	ok := regexp.MustCompile(`(?m)^ok +live g \(gemini\): started, edited and committed contained, metered \d+ tokens as the API sent, exited 0 in `)
	if r.Code != 0 || !ok.MatchString(r.Stdout) {
		t.Fatalf("doctor --live with the real Gemini CLI: %v", r)
	}
	r = fwtest.RunEnv(t, dir, geminiEnv(gemini, t.TempDir()), "doctor", "--live")
	if r.Code != 1 || !strings.Contains(r.Stdout, "FAIL  live g (gemini): ") || !strings.Contains(r.Stdout, "Invalid auth method selected.") {
		t.Errorf("doctor --live with no auth type chosen: %v", r)
	}
}
