package firsthourtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/registry"
)

// on turns every setting of a scaffolded file on: a line "#key" or
// "#  nested" loses its #; notes ("# text") stay.
func on(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "# ") || strings.HasPrefix(l, "#  ") {
			lines[i] = l[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// scaffold writes a commented fleetwatch.yaml and endpoints.yaml that the
// commands read as the defaults, and that work with every setting on; it
// never overwrites either, says .plans/ is meant to be committed and
// prints the next three commands, each of which runs.
func TestScaffoldWritesSettingsThatWork(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitRepo(t)
	r := fwtest.Run(t, dir, "scaffold")
	if r.Code != 0 || !strings.Contains(r.Stdout, "created fleetwatch.yaml (integration: main; every other setting commented out)") ||
		!strings.Contains(r.Stdout, "created endpoints.yaml (every setting commented out)") ||
		!strings.Contains(r.Stdout, ".plans/ is meant to be committed") || strings.Contains(r.Stdout, "not in a git repository") {
		t.Fatalf("scaffold: %v", r)
	}
	_, next, _ := strings.Cut(r.Stdout, "\nNext:\n")
	var cmds []string
	for _, line := range strings.Split(strings.TrimSpace(next), "\n") {
		cmd, _, _ := strings.Cut(strings.TrimSpace(line), "  #")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	if len(cmds) != 3 || !strings.HasPrefix(cmds[0], "fleetwatch agents") || !strings.HasPrefix(cmds[2], "fleetwatch work-once --run") {
		t.Fatalf("want the next three commands, got %q", cmds)
	}
	// As written: the defaults. Every command that reads them works.
	for _, args := range [][]string{{"check"}, {"doctor"}, {"agents"}, {"work-once", "--list"}, {"board", "--once"}} {
		if r := fwtest.RunEnv(t, dir, []string{"PATH=" + onlyGit(t)}, args...); r.Code > 1 || r.Stderr != "" && args[0] != "work-once" {
			t.Errorf("%v on the scaffolded files: %v", args, r)
		}
	}
	r = fwtest.Run(t, dir, "work-once", "--run", "--agent-id", "w1")
	if r.Code != 2 || !strings.Contains(r.Stderr, "lists no endpoint yet: uncomment one") {
		t.Errorf("--run with every endpoint commented out: %v", r)
	}
	// Every setting on: both files parse, and agents shows each endpoint.
	settings, _ := os.ReadFile(filepath.Join(dir, "fleetwatch.yaml"))
	endpoints, _ := os.ReadFile(filepath.Join(dir, "endpoints.yaml"))
	writeFile(t, dir, "fleetwatch.yaml", on(string(settings)))
	writeFile(t, dir, "endpoints.yaml", on(string(endpoints)))
	if r := fwtest.Run(t, dir, "agents"); r.Code != 0 || strings.Count(r.Stdout, ", agent ") != len(registry.Presets) || !strings.Contains(r.Stdout, "script  tier small, model -, command:") {
		t.Errorf("agents with every endpoint on: %v", r)
	}
	// (It says the checks are not committed on main yet: the gate's.)
	if r := fwtest.Run(t, dir, "check"); r.Code > 1 || regexp.MustCompile(`fleetwatch\.yaml:\d`).MatchString(r.Stdout+r.Stderr) {
		t.Errorf("check with every setting on: %v", r)
	}
	// A second scaffold keeps both files as they are now.
	r = fwtest.Run(t, dir, "scaffold")
	if r.Code != 0 || !strings.Contains(r.Stdout, "kept fleetwatch.yaml: it exists") || !strings.Contains(r.Stdout, "kept endpoints.yaml: it exists") || !strings.Contains(r.Stdout, "nothing to do") {
		t.Errorf("second scaffold: %v", r)
	}
	if now, _ := os.ReadFile(filepath.Join(dir, "endpoints.yaml")); string(now) != on(string(endpoints)) {
		t.Error("scaffold overwrote endpoints.yaml")
	}
	// Outside git it says what is missing.
	if r := fwtest.Run(t, t.TempDir(), "scaffold"); r.Code != 0 || !strings.Contains(r.Stdout, "not in a git repository: run git init first") {
		t.Errorf("scaffold outside git: %v", r)
	}
}
