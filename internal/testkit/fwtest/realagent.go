package fwtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/modelapi"
	"github.com/fleetwatch/fleetwatch/registry"
)

// AgentsEnv names the folder holding the real agent CLIs' programs
// (`.ci/run` installs them with npm into a folder and sets it).
const AgentsEnv = "FLEETWATCH_AGENTS"

// RealAgent is the real CLI of the preset called preset, from AgentsEnv's
// folder: the version the preset is proven against. The test skips saying
// how to install it where it is missing, and fails in CI, which has it.
func RealAgent(t testing.TB, preset string) string {
	t.Helper()
	p, ok := registry.PresetNamed(preset)
	if !ok || p.Package == "" || p.Proven == "" {
		t.Fatalf("preset %q names no npm package and proven version", preset)
	}
	dir := os.Getenv(AgentsEnv)
	bin := filepath.Join(dir, p.Program)
	if _, err := exec.LookPath(bin); dir == "" || err != nil {
		why := "install it: npm install --prefix ~/.cache/fleetwatch-agents " + p.Package + "@" + p.Proven +
			" and set " + AgentsEnv + "=~/.cache/fleetwatch-agents/node_modules/.bin"
		if os.Getenv("CI") != "" {
			t.Fatalf("CI runs the real %s, but it is not in $%s (%q): %s", p.Program, AgentsEnv, dir, why)
		}
		t.Skipf("no real %s here: %s", p.Program, why)
	}
	return bin
}

// ScriptedAPI serves steps on loopback until the test ends
// (internal/modelapi).
func ScriptedAPI(t testing.TB, steps ...modelapi.Step) *modelapi.Server {
	t.Helper()
	s, err := modelapi.Start(modelapi.Script{Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
