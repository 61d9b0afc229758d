package uitest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// projectDirs scaffolds a project per name under one folder, each with a
// bug named after it.
func projectDirs(t *testing.T, names ...string) (base string, dirs []string) {
	t.Helper()
	base = t.TempDir()
	for _, n := range names {
		dir := filepath.Join(base, n)
		if r := fwtest.Run(t, base, "scaffold", dir); r.Code != 0 {
			t.Fatalf("scaffold %s: %v", n, r)
		}
		fwtest.WritePlan(t, dir, fwtest.Plan{Rel: "bugs/fix-" + n + ".md", Fields: "Preferred models: mid"}, time.Hour)
		dirs = append(dirs, dir)
	}
	return base, dirs
}

// TestTmuxProjects runs `fleetwatch --root api --root web --root gone`:
// the overview lists both projects and the missing one as a problem row;
// enter opens api, > steps to web, whose help lists the keys between
// projects; a plan reaching review in api while
// the operator is in web shows in web's header, naming api; 0 goes back
// to the overview, which counts it; q quits with status 0.
func TestTmuxProjects(t *testing.T) {
	t.Parallel()
	needTmux(t)
	base, dirs := projectDirs(t, "api", "web")
	gone := filepath.Join(base, "gone")
	tt := startTmux(t, 100, 24, base, nil, "--root", dirs[0], "--root", dirs[1], "--root", gone)
	tt.waitShows(tmuxStartWait, `fleetwatch · 3 projects`, `api\s+0\s+1\s+0`, `web\s+0\s+1\s+0`,
		`gone\s+⚠ `+gone+`: no such folder`)
	tt.keys("Enter")
	tt.waitShows(tmuxWait, `(?m)^ (?:fleetwatch · )?api · `, `fix-api`)
	tt.keys(">")
	tt.waitShows(tmuxWait, `(?m)^ (?:fleetwatch · )?web · `, `fix-web`)
	fwtest.WritePlan(t, dirs[0], fwtest.Plan{Rel: "review-needed/done-api.md", Fields: "Preferred models: mid"}, time.Minute)
	tt.waitShows(tmuxLiveRefresh, `fleetwatch · web · ⚑ api 1`)
	tt.keys("?")
	tt.waitShows(tmuxWait, `Plans pane \(1\)`)
	tt.keys("NPage") // past the pane's keys: the keys between projects
	tt.waitShows(tmuxWait, `0 projects overview`, `> next project`)
	tt.keys("Escape")
	tt.waitFor(tmuxWait, "the help closed", func(s string) bool { return !strings.Contains(s, "0 projects overview") })
	tt.keys("0")
	tt.waitShows(tmuxWait, `fleetwatch · 3 projects · ⚑ 1`, `api\s+0\s+1\s+0\s+0\s+1\s+.*⚑ 1`)
	tt.keys("q")
	if code := tt.waitExit(); code != 0 {
		t.Fatalf("fleetwatch exited %d after q; last screen:\n%s", code, tt.screen)
	}
}

// projects.yaml: a bad entry is one line naming the file and the line;
// --projects without the file names where it looked; --projects beside
// --root is refused; outside any project, with the file there, fleetwatch
// opens its projects (here: no terminal, so it says so for several).
func TestProjectsFile(t *testing.T) {
	t.Parallel()
	_, dirs := projectDirs(t, "api")
	cfg := t.TempDir()
	env := []string{"XDG_CONFIG_HOME=" + cfg}
	outside := t.TempDir()

	r := fwtest.RunEnv(t, outside, env, "--projects")
	fwtest.Want(t, r, 2)
	fwtest.OneLineError(t, r, filepath.Join(cfg, "fleetwatch", "projects.yaml"))

	file := filepath.Join(cfg, "fleetwatch", "projects.yaml")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("projects:\n  - name: api\n    root: " + dirs[0] + "\n  - name: web\n    path: ~/web\n")
	r = fwtest.RunEnv(t, outside, env, "--projects")
	fwtest.Want(t, r, 2)
	fwtest.OneLineError(t, r, file+":5:", `unknown key "path"`)

	r = fwtest.RunEnv(t, outside, env, "--projects", "--root", dirs[0])
	fwtest.Want(t, r, 2)
	fwtest.OneLineError(t, r, "--projects", "--root")

	write("projects:\n  - name: api\n    root: " + dirs[0] + "\n  - {name: web, root: ~/nowhere}\n")
	r = fwtest.RunEnv(t, outside, env)
	fwtest.Want(t, r, 2)
	fwtest.OneLineError(t, r, "one project's board")
	// Inside a project, the file is not read: today's cockpit on it.
	r = fwtest.RunEnv(t, dirs[0], env)
	fwtest.Want(t, r, 2)
	if strings.Contains(r.Stderr, "one project's board") {
		t.Errorf("inside a project, fleetwatch opened projects.yaml: %s", r.Stderr)
	}
}
