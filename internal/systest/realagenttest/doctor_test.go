package realagenttest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// `doctor --live` runs the endpoint's real Claude Code, contained, against
// the built-in scripted API in a throwaway repository, and says it
// worked; a CLI that fails is a FAIL line with its log, and exit 1.
func TestDoctorLiveRunsTheRealCLI(t *testing.T) {
	fwtest.NeedLandlock(t, 4)
	claude := fwtest.RealAgent(t, "claude")
	dir := fwtest.GitRepo(t)
	endpoints := "endpoints:\n  - name: cc\n    tier: mid\n    model: claude-sonnet-4-5\n    agent: claude\n"
	if err := os.WriteFile(filepath.Join(dir, "endpoints.yaml"), []byte(endpoints), 0o644); err != nil {
		t.Fatal(err)
	}
	path := "PATH=" + filepath.Dir(claude) + string(os.PathListSeparator) + os.Getenv("PATH")
	r := fwtest.RunEnv(t, dir, []string{"HOME=" + claudeHome(t), path}, "doctor", "--live")
	ok := regexp.MustCompile(`(?m)^ok +live cc \(claude\): started, edited and committed contained, metered \d+ tokens as the API sent, exited 0 in `)
	if r.Code != 0 || !ok.MatchString(r.Stdout) {
		t.Fatalf("doctor --live with the real Claude Code: %v", r)
	}
	if out := fwtest.GitOut(t, dir, "status", "--porcelain"); out != "?? endpoints.yaml" {
		t.Errorf("doctor --live touched the project: %q", out)
	}

	// A claude that cannot start its turn.
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\necho 'Invalid API key' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A failed check keeps its throwaway repository, in the test's own
	// temporary folder here.
	r = fwtest.RunEnv(t, dir, []string{"HOME=" + claudeHome(t), "TMPDIR=" + t.TempDir(), "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}, "doctor", "--live", "--endpoint", "cc")
	if r.Code != 1 || !strings.Contains(r.Stdout, "FAIL  live cc (claude): ") || !strings.Contains(r.Stdout, "Invalid API key") {
		t.Errorf("doctor --live with a failing claude: %v", r)
	}
	if r := fwtest.Run(t, dir, "doctor", "--live", "--endpoint", "nope"); r.Code != 1 || !strings.Contains(r.Stdout, `has no endpoint "nope"`) {
		t.Errorf("an unknown endpoint: %v", r)
	}
}
