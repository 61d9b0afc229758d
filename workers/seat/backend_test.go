package seat

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// sh runs a shell line as a setup or teardown argv (the test's own choice
// of program; fleetwatch itself starts no shell).
func sh(line string) []string { return []string{"sh", "-c", line} }

// backendRun is a section whose setup and teardown append a line to a log
// outside the worktree (so the worktree stays clean), and that log.
func backendRun(t *testing.T) (config.Worktree, string) {
	log := filepath.Join(t.TempDir(), "backend.log")
	s := config.Worktree{
		Line:     1,
		Ports:    2,
		Env:      []config.EnvVar{{Name: "DB", Template: "app_{agent_id}", Line: 3}},
		Setup:    [][]string{sh("echo setup {agent_id} {slug} $FLEET_PORT $FLEET_PORT_1 $DB >> " + log)},
		Teardown: [][]string{sh("echo teardown {agent_id} {slug} $DB >> " + log)},
	}
	return s, log
}

// writeSection writes s as dir's fleetwatch.yaml `worktree:` section, as
// the operator would: teardown reads its commands from there.
func writeSection(t *testing.T, dir string, s config.Worktree) {
	t.Helper()
	q := func(v string) string { return strconv.Quote(v) }
	argvs := func(cmds [][]string) string {
		var parts []string
		for _, argv := range cmds {
			words := make([]string, len(argv))
			for i, w := range argv {
				words[i] = q(w)
			}
			parts = append(parts, "["+strings.Join(words, ", ")+"]")
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	var b strings.Builder
	b.WriteString("worktree:\n  ports: " + strconv.Itoa(s.Ports) + "\n")
	if len(s.Env) > 0 {
		b.WriteString("  env:\n")
		for _, e := range s.Env {
			b.WriteString("    " + e.Name + ": " + q(e.Template) + "\n")
		}
	}
	b.WriteString("  setup: " + argvs(s.Setup) + "\n  teardown: " + argvs(s.Teardown) + "\n")
	if err := os.WriteFile(filepath.Join(dir, config.File), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := config.Load(dir)
	if err != nil || sectionHash(got.Worktree) != sectionHash(s) {
		t.Fatalf("fleetwatch.yaml does not read back as the section: %v\n%s", err, b.String())
	}
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(data)), " ", "_"))
}

func clean(t *testing.T, dir string) {
	t.Helper()
	if st := testkit.Git(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("git status in %s: %q", dir, st)
	}
}

// .env.fleetwatch: the filled-in variables, quoted for sh and dotenv, and
// ignored through the common exclude file, in every worktree.
func TestBackendEnvFileIsWrittenAndIgnored(t *testing.T) {
	dir, wt := ensured(t, "w1", "fix-login")
	s := config.Worktree{Line: 1, Ports: 2, Env: []config.EnvVar{
		{Name: "DATABASE_URL", Template: "postgres://127.0.0.1:{port_1}/app_{agent_id}"},
		{Name: "WHERE", Template: "{worktree} in {project}"},
		{Name: "NOTE", Template: "it's {slug}"},
		{Name: "PORT_A", Template: "{port}"},
	}}
	b, err := PrepareBackend(dir, s, "w1", "fix-login", wt.Path, []int{4101, 4102})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"DATABASE_URL=postgres://127.0.0.1:4102/app_w1", "WHERE=" + wt.Path + " in " + filepath.Base(dir), "NOTE=it's fix-login", "PORT_A=4101"}
	if !reflect.DeepEqual(b.Env, want) || b.File != filepath.Join(wt.Path, tree.EnvFile) || !b.SetUp {
		t.Fatalf("backend %+v", b)
	}
	data, _ := os.ReadFile(b.File)
	wantFile := "DATABASE_URL=postgres://127.0.0.1:4102/app_w1\nWHERE='" + wt.Path + " in " + filepath.Base(dir) + "'\nNOTE=\"it's fix-login\"\nPORT_A=4101\n"
	if !strings.HasSuffix(string(data), wantFile) {
		t.Errorf(".env.fleetwatch:\n%s\nwant it to end with:\n%s", data, wantFile)
	}
	clean(t, wt.Path)
	clean(t, dir)

	// A second worktree and a second run add nothing to the exclude file.
	wt2, err := Ensure(dir, "w2", "")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := PrepareBackend(dir, s, "w2", "", wt2.Path, []int{4103, 4104}); err != nil {
			t.Fatal(err)
		}
	}
	clean(t, wt2.Path)
	exclude, _ := os.ReadFile(filepath.Join(dir, ".git", "info", "exclude"))
	if n := strings.Count(string(exclude), "\n/"+tree.EnvFile+"\n"); n != 1 {
		t.Errorf("exclude names %s %d times:\n%s", tree.EnvFile, n, exclude)
	}
	// Its content never counts as the agent's change: git add -A leaves it.
	testkit.Git(t, wt.Path, "add", "-A")
	if staged := testkit.Git(t, wt.Path, "diff", "--cached", "--name-only"); staged != "" {
		t.Errorf("staged: %q", staged)
	}
}

// The env file is replaced, never written through a symlink; a tracked one
// is refused; a value no quoting reads back the same is refused.
func TestBackendEnvFileRefusals(t *testing.T) {
	dir, wt := ensured(t, "w", "x")
	outside := filepath.Join(t.TempDir(), "target")
	os.WriteFile(outside, []byte("keep\n"), 0o644)
	if err := os.Symlink(outside, filepath.Join(wt.Path, tree.EnvFile)); err != nil {
		t.Fatal(err)
	}
	s := config.Worktree{Line: 1, Env: []config.EnvVar{{Name: "A", Template: "{slug}"}}}
	if _, err := PrepareBackend(dir, s, "w", "x", wt.Path, []int{4100}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(outside); string(data) != "keep\n" {
		t.Errorf("written through the symlink: %q", data)
	}
	if fi, err := os.Lstat(filepath.Join(wt.Path, tree.EnvFile)); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("env file %v %v", fi, err)
	}

	bad := config.Worktree{Line: 1, Env: []config.EnvVar{{Name: "A", Template: "it's $HOME", Line: 4}}}
	if _, err := PrepareBackend(dir, bad, "w", "x", wt.Path, []int{4100}); err == nil || !strings.Contains(err.Error(), "fleetwatch.yaml:4: worktree: env: A: its value holds both a single quote") {
		t.Errorf("unquotable value: %v", err)
	}

	dir2, wt2 := ensured(t, "v", "")
	os.WriteFile(filepath.Join(wt2.Path, tree.EnvFile), []byte("A=1\n"), 0o644)
	testkit.Git(t, wt2.Path, "add", "-f", tree.EnvFile)
	testkit.Git(t, wt2.Path, "commit", "-q", "-m", "tracked env")
	if _, err := PrepareBackend(dir2, s, "v", "", wt2.Path, []int{4100}); err == nil || !strings.Contains(err.Error(), "is tracked in the repository") {
		t.Errorf("tracked env file: %v", err)
	}
}

// Setup runs once per worktree; another plan tears the old backend down
// (with its values) and sets up the new one; so does a changed section.
func TestBackendSetupOnceAndAgainForAnotherPlan(t *testing.T) {
	dir, wt := ensured(t, "w", "x")
	s, log := backendRun(t)
	ports := []int{4200, 4201}
	for i := range 2 {
		b, err := PrepareBackend(dir, s, "w", "x", wt.Path, ports)
		if err != nil || b.SetUp != (i == 0) {
			t.Fatalf("run %d: %+v %v", i, b, err)
		}
	}
	if got := lines(t, log); !reflect.DeepEqual(got, []string{"setup_w_x_4200_4201_app_w"}) {
		t.Fatalf("after two runs on x: %q", got)
	}
	if _, err := PrepareBackend(dir, s, "w", "y", wt.Path, ports); err != nil {
		t.Fatal(err)
	}
	s.Env = append(s.Env, config.EnvVar{Name: "MORE", Template: "1"})
	if _, err := PrepareBackend(dir, s, "w", "y", wt.Path, ports); err != nil {
		t.Fatal(err)
	}
	want := []string{"setup_w_x_4200_4201_app_w", "teardown_w_x_app_w", "setup_w_y_4200_4201_app_w", "teardown_w_y_app_w", "setup_w_y_4200_4201_app_w"}
	if got := lines(t, log); !reflect.DeepEqual(got, want) {
		t.Fatalf("log %q\nwant %q", got, want)
	}
	marker := filepath.Join(dir, filepath.FromSlash(backendDir), "w.json")
	if data, err := os.ReadFile(marker); err != nil || !strings.Contains(string(data), `"slug": "y"`) {
		t.Fatalf("marker %s %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(wt.Path, filepath.FromSlash(backendDir))); err == nil {
		t.Error("a marker inside the worktree")
	}
	if err := teardownBackend(dir, s, "w", wt.Path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("marker after teardown: %v", err)
	}
	if err := teardownBackend(dir, s, "w", wt.Path); err != nil {
		t.Errorf("a second teardown: %v", err)
	}
	if n := len(lines(t, log)); n != 6 {
		t.Errorf("%d log lines, want 6 (one teardown)", n)
	}
	// After a teardown, setup runs again.
	if b, err := PrepareBackend(dir, s, "w", "y", wt.Path, ports); err != nil || !b.SetUp {
		t.Errorf("after teardown: %+v %v", b, err)
	}
	clean(t, wt.Path)
}

// A failing setup says which command, its exit status and last output
// line; no marker is written, and what it made is torn down.
func TestBackendFailingSetup(t *testing.T) {
	dir, wt := ensured(t, "w", "x")
	s, log := backendRun(t)
	s.Setup = append(s.Setup, sh("echo working; echo 'createdb: error: database \"app_w\" already exists' >&2; exit 3"))
	_, err := PrepareBackend(dir, s, "w", "x", wt.Path, []int{4300, 4301})
	want := "backend setup command 2 of 2 `sh -c 'echo working; "
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), `failed (exit 3): createdb: error: database "app_w" already exists (log: var/fleet/backends/w.log)`) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(backendDir), "w.json")); !os.IsNotExist(err) {
		t.Errorf("marker after a failed setup: %v", err)
	}
	if got := lines(t, log); !reflect.DeepEqual(got, []string{"setup_w_x_4300_4301_app_w", "teardown_w_x_app_w"}) {
		t.Errorf("log %q", got)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "var", "fleet", "backends", "w.log")); !strings.Contains(string(data), "working\n") {
		t.Errorf("backend log:\n%s", data)
	}
	s.Setup = [][]string{{"no-such-program-fw"}}
	if _, err := PrepareBackend(dir, s, "w", "x", wt.Path, []int{4300, 4301}); err == nil || !strings.Contains(err.Error(), "`no-such-program-fw` did not start") {
		t.Errorf("missing program: %v", err)
	}
}

// A setup that outlives its timeout is killed with its whole group; one
// that leaves a daemon behind is done when it exits.
func TestBackendSetupTimeoutAndDaemons(t *testing.T) {
	t.Parallel() // two waits of its own: the kill after 300 ms, the daemon's output (2 s)
	dir, wt := ensured(t, "w", "x")
	pidfile := filepath.Join(t.TempDir(), "pid")
	s := config.Worktree{Line: 1, Timeout: 300 * time.Millisecond, Setup: [][]string{sh("sleep 60 & echo $! > " + pidfile + "; wait")}}
	start := time.Now()
	_, err := PrepareBackend(dir, s, "w", "x", wt.Path, []int{4400})
	if err == nil || !strings.Contains(err.Error(), "did not finish within 300ms; killed") {
		t.Fatalf("error %v", err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("took %v", took)
	}
	data, _ := os.ReadFile(pidfile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	deadline := time.Now().Add(10 * time.Second)
	for pid > 0 && testkit.Alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if pid == 0 || testkit.Alive(pid) {
		t.Errorf("the setup's child %d lives on", pid)
	}

	daemon := filepath.Join(t.TempDir(), "daemon")
	s = config.Worktree{Line: 1, Setup: [][]string{sh("sleep 60 & echo $! > " + daemon)}}
	if _, err := PrepareBackend(dir, s, "w", "y", wt.Path, []int{4400}); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(daemon)
	if pid, _ := strconv.Atoi(strings.TrimSpace(string(data))); pid <= 0 || !testkit.Alive(pid) {
		t.Errorf("the daemon %q a setup started did not survive it", data)
	} else {
		testkit.KillGroup(pid)
	}
}

// A failing teardown keeps the marker: the old backend is not forgotten,
// and no new one is set up over it.
func TestBackendFailingTeardownKeepsMarker(t *testing.T) {
	dir, wt := ensured(t, "w", "x")
	s, log := backendRun(t)
	s.Teardown = [][]string{sh("echo 'dropdb: error: cannot drop' >&2; exit 1")}
	if _, err := PrepareBackend(dir, s, "w", "x", wt.Path, []int{4500, 4501}); err != nil {
		t.Fatal(err)
	}
	_, err := PrepareBackend(dir, s, "w", "y", wt.Path, []int{4500, 4501})
	if err == nil || !strings.Contains(err.Error(), "backend teardown (agent w, plan x) command 1 of 1") || !strings.Contains(err.Error(), "failed (exit 1): dropdb: error: cannot drop") {
		t.Fatalf("error %v", err)
	}
	if err := teardownBackend(dir, s, "w", wt.Path); err == nil || !strings.Contains(err.Error(), "delete var/fleet/backends/w.json to forget that backend") {
		t.Fatalf("teardown: %v", err)
	}
	marker := filepath.Join(dir, filepath.FromSlash(backendDir), "w.json")
	if data, err := os.ReadFile(marker); err != nil || !strings.Contains(string(data), `"slug": "x"`) {
		t.Fatalf("marker %s %v", data, err)
	}
	if got := lines(t, log); len(got) != 1 {
		t.Errorf("setup ran again over a backend not torn down: %q", got)
	}
}

// worktree remove tears the backend down first; when that fails the
// worktree stays, and the error says so.
func TestRemoveTearsDownTheBackend(t *testing.T) {
	dir, wt := ensured(t, "w", "x")
	s, log := backendRun(t)
	s.Teardown = [][]string{sh("exit 4")}
	writeSection(t, dir, s)
	if _, err := PrepareBackend(dir, s, "w", "x", wt.Path, []int{4600, 4601}); err != nil {
		t.Fatal(err)
	}
	_, err := Remove(dir, "w", false, false)
	if err == nil || !strings.Contains(err.Error(), "failed (exit 4)") || !strings.HasSuffix(err.Error(), "; the worktree "+wt.Path+" is kept") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("remove: %v", err)
	}
	if !tree.IsDir(wt.Path) {
		t.Fatal("the worktree is gone")
	}
	if list, _ := look.List(dir); len(list) != 1 {
		t.Fatalf("registry lost the entry: %+v", list)
	}

	s, log = backendRun(t)
	dir2, wt2 := ensured(t, "v", "x")
	writeSection(t, dir2, s)
	if _, err := PrepareBackend(dir2, s, "v", "x", wt2.Path, []int{4600, 4601}); err != nil {
		t.Fatal(err)
	}
	if _, err := Remove(dir2, "v", false, false); err != nil {
		t.Fatal(err)
	}
	if got := lines(t, log); !reflect.DeepEqual(got, []string{"setup_v_x_4600_4601_app_v", "teardown_v_x_app_v"}) {
		t.Errorf("log %q", got)
	}
	if tree.IsDir(wt2.Path) {
		t.Error("worktree kept after a good teardown")
	}
}

// A check's or a review's own backend: its own ports, torn down and given
// back when done.
func TestOwnBackend(t *testing.T) {
	dir, wt := ensured(t, "w", "x")
	s, log := backendRun(t)
	b, done, err := OwnBackend(dir, s, "check-test-abc", "", wt.Path)
	if err != nil || len(b.Ports) != 2 || !b.SetUp {
		t.Fatalf("%+v %v", b, err)
	}
	if _, ok := look.PortOf(dir, "check-test-abc"); !ok {
		t.Error("no port recorded while it runs")
	}
	if err := done(); err != nil {
		t.Fatal(err)
	}
	if _, ok := look.PortOf(dir, "check-test-abc"); ok {
		t.Error("port kept after done")
	}
	if got := lines(t, log); len(got) != 2 || !strings.HasPrefix(got[1], "teardown_check-test-abc") {
		t.Errorf("log %q", got)
	}
	if b, done, err := OwnBackend(dir, config.Worktree{}, "x", "", wt.Path); err != nil || b.Ports != nil || done() != nil {
		t.Errorf("no section: %+v %v", b, err)
	}
}

// What a killed check or review runner left is found by its worktree: torn
// down, its ports given back; other worktrees' backends are left alone.
func TestTeardownBackendsIn(t *testing.T) {
	dir, wt := ensured(t, "w", "x")
	other, err := Ensure(dir, "v", "")
	if err != nil {
		t.Fatal(err)
	}
	s, log := backendRun(t)
	writeSection(t, dir, s)
	lo := testkit.FreePorts(t, 6)
	r := look.PortRange{Lo: lo, Hi: lo + 5}
	for _, c := range []struct{ id, path string }{{"check-a-1", wt.Path}, {"v", other.Path}} {
		ports, err := look.AssignPorts(dir, c.id, r, 2)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := PrepareBackend(dir, s, c.id, "", c.path, ports); err != nil {
			t.Fatal(err)
		}
	}
	if err := TeardownBackendsIn(dir, wt.Path); err != nil {
		t.Fatal(err)
	}
	if got := lines(t, log); len(got) != 3 || got[2] != "teardown_check-a-1_app_check-a-1" {
		t.Errorf("log %q", got)
	}
	if _, ok := look.PortOf(dir, "check-a-1"); ok {
		t.Error("the dead runner's port is kept")
	}
	if _, ok := look.PortOf(dir, "v"); !ok {
		t.Error("another worktree's port was taken")
	}
}

// Workers starting together add the exclude line once.
func TestBackendExcludeLineOnceUnderRace(t *testing.T) {
	dir := testkit.Repo(t)
	s := config.Worktree{Line: 1, Env: []config.EnvVar{{Name: "A", Template: "{agent_id}"}}}
	var wts []string
	for i := range 4 {
		wt, err := Ensure(dir, "r"+strconv.Itoa(i), "")
		if err != nil {
			t.Fatal(err)
		}
		wts = append(wts, wt.Path)
	}
	errs := make([]error, len(wts))
	var wg sync.WaitGroup
	for i, wt := range wts {
		wg.Go(func() { _, errs[i] = PrepareBackend(dir, s, "r"+strconv.Itoa(i), "", wt, []int{4700 + i}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("r%d: %v", i, err)
		}
		clean(t, wts[i])
	}
	exclude, _ := os.ReadFile(filepath.Join(dir, ".git", "info", "exclude"))
	if n := strings.Count(string(exclude), "\n/"+tree.EnvFile+"\n"); n != 1 {
		t.Errorf("exclude names %s %d times:\n%s", tree.EnvFile, n, exclude)
	}
}

// A marker records values, not commands: an agent that rewrites it to hold
// a teardown of its own (and a variable that would load its code) gets
// neither run; the section's teardown runs, with the marker's values. A
// marker whose values no setup could have written runs nothing at all.
func TestBackendMarkerCommandsAreNeverRun(t *testing.T) {
	dir, wt := ensured(t, "w", "x")
	s, log := backendRun(t)
	writeSection(t, dir, s)
	if _, err := PrepareBackend(dir, s, "w", "x", wt.Path, []int{4700, 4701}); err != nil {
		t.Fatal(err)
	}
	sentinel := filepath.Join(t.TempDir(), "pwned")
	marker := filepath.Join(dir, filepath.FromSlash(backendDir), "w.json")
	forge := func(fields map[string]any) {
		t.Helper()
		data, err := os.ReadFile(marker)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		for k, v := range fields {
			m[k] = v
		}
		if data, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(marker, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	forge(map[string]any{
		"teardown": [][]string{{"sh", "-c", "touch " + sentinel}},
		"env":      []string{"DB=app_w", "BASH_ENV=" + sentinel, "ENV=" + sentinel},
	})
	if err := teardownBackend(dir, s, "w", wt.Path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sentinel); err == nil {
		t.Fatal("teardown ran a command read from the marker")
	}
	if got := lines(t, log); !reflect.DeepEqual(got, []string{"setup_w_x_4700_4701_app_w", "teardown_w_x_app_w"}) {
		t.Errorf("log %q, want the section's teardown with the marker's values", got)
	}

	// Values that are no plan's or agent's refuse the teardown.
	for _, bad := range []map[string]any{{"slug": "../../etc"}, {"agent": "someone-else"}, {"ports": []int{0}}} {
		if _, err := PrepareBackend(dir, s, "w", "x", wt.Path, []int{4700, 4701}); err != nil {
			t.Fatal(err)
		}
		forge(bad)
		err := teardownBackend(dir, s, "w", wt.Path)
		if err == nil || !strings.Contains(err.Error(), "not what fleetwatch wrote") {
			t.Errorf("marker with %v: %v", bad, err)
		}
		os.Remove(marker)
	}
	if _, err := os.Stat(sentinel); err == nil {
		t.Fatal("teardown ran a command read from the marker")
	}
}

// A section that refuses one plan's name and not another's says the plan
// is at fault (ErrPlanRefused), so the claim loop moves on; one that
// refuses every plan alike is the worker's error.
func TestBackendRefusalIsThePlans(t *testing.T) {
	dir, wt := ensured(t, "w", "x")
	s := config.Worktree{Line: 1, Env: []config.EnvVar{{Name: "NOTE", Template: "on {slug}", Line: 3}}}
	_, err := PrepareBackend(dir, s, "w", "won't-$pay", wt.Path, []int{4800})
	if !errors.Is(err, ErrPlanRefused) || !strings.Contains(err.Error(), "plan won't-$pay: fleetwatch.yaml:3: worktree: env: NOTE") {
		t.Errorf("refused name: %v", err)
	}
	judge := BackendRefusal(dir, s, "w")
	if why := judge("won't-$pay"); !strings.Contains(why, "refuses its name") || judge("fine") != "" {
		t.Errorf("BackendRefusal: %q / %q", why, judge("fine"))
	}
	s.Env[0].Template = "it's $HOME {slug}"
	if _, err := PrepareBackend(dir, s, "w", "fine", wt.Path, []int{4800}); err == nil || errors.Is(err, ErrPlanRefused) {
		t.Errorf("a section refusing every plan: %v", err)
	}
	if judge := BackendRefusal(dir, s, "w"); judge("won't-$pay") != "" {
		t.Error("a section refusing every plan blames the plan")
	}
}
