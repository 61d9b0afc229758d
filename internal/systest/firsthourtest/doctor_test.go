package firsthourtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// onlyGit is a PATH holding git and sh alone: a machine lacking every
// agent, ssh, tmux and the schedulers.
func onlyGit(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	for _, prog := range []string{"git", "sh", "env", "grep"} {
		p, err := exec.LookPath(prog)
		if err != nil {
			t.Skipf("no %s", prog)
		}
		if err := os.Symlink(p, filepath.Join(bin, prog)); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

// doctor on a machine lacking a program: a preset no endpoint uses is a
// "--" line (and the scaffolded endpoints.yaml, turning none on, a FAIL
// line); once an endpoint uses it, a FAIL line naming it
// and exit 1; with the program on PATH, ok again.
func TestDoctorOnAMachineLackingAProgram(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitProject(t)
	bin := onlyGit(t)
	path := []string{"PATH=" + bin}
	r := fwtest.RunEnv(t, dir, path, "doctor")
	if r.Code != 1 || !strings.Contains(r.Stdout, "FAIL  endpoints: ") || !strings.Contains(r.Stdout, "--    agent gemini: gemini not on PATH (no endpoint uses it)") ||
		!strings.Contains(r.Stdout, "ok    git ") || !strings.Contains(r.Stdout, "ok    tmux: not needed") {
		t.Fatalf("nothing configured: %v", r)
	}
	if n := strings.Count(r.Stdout, "\n"); n < 10 {
		t.Errorf("want a line per feature and preset, got %d:\n%s", n, r.Stdout)
	}
	writeFile(t, dir, "endpoints.yaml", "endpoints:\n  - name: gem\n    tier: mid\n    model: gemini-2.5-pro\n    agent: gemini\n"+
		"  - name: own\n    tier: small\n    command: [no-such-agent-7f3, '{plan}']\n")
	r = fwtest.RunEnv(t, dir, path, "doctor")
	if r.Code != 1 || !strings.Contains(r.Stdout, "FAIL  agent gemini: gemini not on PATH, and endpoint gem runs it") ||
		!strings.Contains(r.Stdout, "FAIL  endpoint own: executor no-such-agent-7f3: not found on PATH") {
		t.Fatalf("an endpoint's program missing: %v", r)
	}
	standIn(t, bin, "gemini", t.TempDir())
	writeFile(t, dir, "endpoints.yaml", "endpoints:\n  - name: gem\n    tier: mid\n    model: gemini-2.5-pro\n    agent: gemini\n")
	r = fwtest.RunEnv(t, dir, path, "doctor")
	if r.Code != 0 || !strings.Contains(r.Stdout, "ok    agent gemini: on PATH: "+filepath.Join(bin, "gemini")) || !strings.Contains(r.Stdout, "endpoint gem runs it") {
		t.Fatalf("with gemini on PATH: %v", r)
	}
	// Settings that cannot work here: a broken file, a git claims backend
	// without its remote.
	writeFile(t, dir, "fleetwatch.yaml", "claims: {backend: git, remote: upstream}\n")
	r = fwtest.RunEnv(t, dir, path, "doctor")
	if r.Code != 1 || !strings.Contains(r.Stdout, "FAIL  claims: backend git, but no remote upstream here") {
		t.Fatalf("git claims without the remote: %v", r)
	}
	writeFile(t, dir, "fleetwatch.yaml", "sandbox: maybe\n")
	if r = fwtest.RunEnv(t, dir, path, "doctor"); r.Code != 1 || !strings.Contains(r.Stdout, "FAIL  "+filepath.Join(dir, "fleetwatch.yaml")+":1: sandbox: want auto, require or off") {
		t.Fatalf("a bad fleetwatch.yaml: %v", r)
	}
	if r := fwtest.Run(t, dir, "doctor", "extra"); r.Code != 2 {
		t.Errorf("doctor extra: %v", r)
	}
}
