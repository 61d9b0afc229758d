package landing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// checksRepo is a repository with var/ ignored and one tracked file; it
// returns the folder and its head commit.
func checksRepo(t *testing.T) (string, string) {
	t.Helper()
	dir := fwtest.GitRepo(t)
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("var/\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "tracked.txt"), []byte("v1\n"), 0o644)
	fwtest.GitOut(t, dir, "add", ".")
	fwtest.GitOut(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
	return dir, fwtest.GitOut(t, dir, "rev-parse", "HEAD")
}

// observed lets dir's checks write outside their worktree (`sandbox:
// off`), for tests that watch a check's processes through files it writes;
// TestChecksAreContained is the sandbox's.
func observed(t *testing.T, dir string) {
	t.Helper()
	p := filepath.Join(dir, "fleetwatch.yaml")
	old, _ := os.ReadFile(p)
	if err := os.WriteFile(p, append(old, "sandbox: off\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
}

func shCheck(name, script string) config.Check {
	return config.Check{Name: name, Run: []string{"sh", "-c", script}, Timeout: time.Minute}
}

func runOK(t *testing.T, dir string, checks []config.Check, commit string) ([]CheckResult, string) {
	t.Helper()
	var log bytes.Buffer
	got, err := RunChecks(context.Background(), dir, checks, commit, &log)
	if err != nil {
		t.Fatalf("RunChecks: %v\n%s", err, log.String())
	}
	if len(got) != len(checks) {
		t.Fatalf("%d results for %d checks", len(got), len(checks))
	}
	return got, log.String()
}

// noCheckWorktrees fails unless every throwaway worktree is gone, from disk
// and from git's list.
func noCheckWorktrees(t *testing.T, dir string) {
	t.Helper()
	if names, _ := os.ReadDir(filepath.Join(dir, "var/fleet/checks/wt")); len(names) > 0 {
		t.Errorf("worktrees left: %v", names)
	}
	if list := fwtest.GitOut(t, dir, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("git still lists check worktrees:\n%s", list)
	}
}

func TestChecksVerdicts(t *testing.T) {
	dir, commit := checksRepo(t)
	tree, err := TreeOf(dir, commit)
	if err != nil || len(tree) != 40 {
		t.Fatalf("TreeOf: %q %v", tree, err)
	}
	expect := func(c config.Check, re string) config.Check {
		c.ExpectOutput = regexp.MustCompile(re)
		return c
	}
	env := shCheck("env", `test "$FLEET_CHECK" = env && test "$CI" = 1 && test -n "$PORT" && test "$PORT" = "$FLEET_PORT" &&
		test "$FLEET_TREE" = `+tree+` && test "$FLEET_COMMIT" = `+commit+` && test "$MINE" = "a b" && test -z "$GIT_DIR" &&
		test "$(cat tracked.txt)" = v1 && test "$PWD" = "$(pwd -P)"`)
	env.Env = map[string]string{"MINE": "a b"}
	checks := []config.Check{
		shCheck("pass", "echo to-stdout; echo to-stderr >&2"),
		{Name: "fail", Run: []string{"false"}},
		shCheck("exit127", "exit 127"),
		shCheck("exit126", "exit 126"),
		{Name: "missing", Run: []string{"no-such-program-fleetwatch"}},
		shCheck("killed", "kill -9 $$"),
		expect(shCheck("nothing-ran", "echo 'no test files'"), "(?m)^ok"),
		expect(shCheck("ran", "echo 'ok  	pkg 0.1s'"), "(?m)^ok"),
		env,
	}
	t.Setenv("GIT_DIR", "/nowhere/.git") // a hook's leftover must not reach git or the check
	got, log := runOK(t, dir, checks, commit)
	os.Unsetenv("GIT_DIR")
	want := []struct {
		result Result
		exit   int
		note   string
	}{
		{Pass, 0, ""}, {Fail, 1, "exit 1"}, {Error, 127, "exit 127: command not found"},
		{Error, 126, "exit 126: could not execute"},
		{Error, -1, "could not start: no-such-program-fleetwatch: executable file not found in $PATH"},
		{Error, -1, "killed by signal SIGKILL"},
		{Fail, 0, `exit 0 but no match for expect_output "(?m)^ok"`}, {Pass, 0, ""}, {Pass, 0, ""},
	}
	for i, w := range want {
		g := got[i]
		if g.Name != checks[i].Name || g.Result != w.result || g.Exit != w.exit || !strings.HasPrefix(g.Note, w.note) || (w.note == "") != (g.Note == "") {
			t.Errorf("%s: got %+v, want %+v", checks[i].Name, g, w)
		}
		if g.Log == "" || !filepath.IsAbs(g.Log) {
			t.Errorf("%s: log %q", g.Name, g.Log)
		}
	}
	if data, _ := os.ReadFile(got[0].Log); string(data) != "to-stdout\nto-stderr\n" {
		t.Errorf("pass's log holds %q", data)
	}
	if !strings.Contains(log, "check pass on "+commit[:6]+": pass in ") || !strings.Contains(log, "check fail on "+commit[:6]+": fail in ") {
		t.Errorf("log lines:\n%s", log)
	}
	if cached := CachedChecks(dir, checks, tree); !sameResults(cached, got) {
		t.Errorf("cached %+v\nran %+v", cached, got)
	}
	noCheckWorktrees(t, dir)
	if st := fwtest.GitOut(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("the project's checkout changed:\n%s", st)
	}
}

func sameResults(a, b []CheckResult) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Result != b[i].Result || a[i].Exit != b[i].Exit || a[i].Note != b[i].Note || a[i].Log != b[i].Log {
			return false
		}
	}
	return true
}

func TestChecksTimeoutKillsTheGroup(t *testing.T) {
	dir, commit := checksRepo(t)
	observed(t, dir)
	pids := filepath.Join(t.TempDir(), "pids")
	c := shCheck("hang", "sleep 30 & echo $! > "+pids+"; echo $$ >> "+pids+"; wait")
	c.Timeout = time.Second
	start := time.Now()
	got, _ := runOK(t, dir, []config.Check{c}, commit)
	if got[0].Result != Timeout || got[0].Note != "killed after 1s" {
		t.Errorf("%+v", got[0])
	}
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("took %v for a 1s timeout", took)
	}
	data, _ := os.ReadFile(pids)
	for _, f := range strings.Fields(string(data)) {
		pid, _ := strconv.Atoi(f)
		fwtest.WaitFor(t, "pid "+f+" to be gone", 5*time.Second, func() bool { return !fwtest.Alive(pid) || fwtest.Zombie(pid) })
	}
	if len(strings.Fields(string(data))) != 2 {
		t.Errorf("pids %q", data)
	}
	noCheckWorktrees(t, dir)
}

func TestChecksAreCachedByTreeAndCheck(t *testing.T) {
	dir, commit := checksRepo(t)
	observed(t, dir)
	count := filepath.Join(t.TempDir(), "count")
	c := shCheck("count", "echo run >> "+count)
	runs := func() int {
		data, _ := os.ReadFile(count)
		return strings.Count(string(data), "run")
	}
	runOK(t, dir, []config.Check{c}, commit)
	got, log := runOK(t, dir, []config.Check{c}, commit)
	if runs() != 1 || got[0].Result != Pass || !strings.Contains(log, "(stored") {
		t.Fatalf("same commit twice: %d runs, %+v, %s", runs(), got, log)
	}
	// Another commit with the same tree shares the result.
	fwtest.GitOut(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "same tree")
	same := fwtest.GitOut(t, dir, "rev-parse", "HEAD")
	if runOK(t, dir, []config.Check{c}, same); runs() != 1 {
		t.Fatalf("same tree, another commit: %d runs", runs())
	}
	// What decides the verdict reruns it: argv, env, timeout, expect_output.
	changed := []config.Check{shCheck("count", "echo run >> "+count+"; true")}
	c2 := c
	c2.Env = map[string]string{"X": "1"}
	c3 := c
	c3.Timeout = 2 * time.Minute
	c4 := c
	c4.ExpectOutput = regexp.MustCompile("^")
	changed = append(changed, c2, c3, c4)
	for i, cc := range changed {
		if runOK(t, dir, []config.Check{cc}, same); runs() != 2+i {
			t.Fatalf("changed check %d: %d runs", i, runs())
		}
	}
	// Another tree reruns it.
	os.WriteFile(filepath.Join(dir, "tracked.txt"), []byte("v2\n"), 0o644)
	fwtest.GitOut(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "v2")
	if runOK(t, dir, []config.Check{c}, "HEAD"); runs() != 6 {
		t.Fatalf("another tree: %d runs", runs())
	}
}

func TestChecksCouldNotStartRunsAgain(t *testing.T) {
	dir, commit := checksRepo(t)
	bin := t.TempDir()
	c := config.Check{Name: "tool", Run: []string{filepath.Join(bin, "tool")}}
	if got, _ := runOK(t, dir, []config.Check{c}, commit); got[0].Result != Error {
		t.Fatalf("%+v", got[0])
	}
	testkit.WriteScript(t, filepath.Join(bin, "tool"), "#!/bin/sh\necho installed\n")
	if got, _ := runOK(t, dir, []config.Check{c}, commit); got[0].Result != Pass {
		t.Fatalf("once installed: %+v", got[0])
	}
}

func TestChecksWriteOnlyInTheirWorktree(t *testing.T) {
	dir, commit := checksRepo(t)
	other := filepath.Join(t.TempDir(), "other")
	fwtest.GitOut(t, dir, "worktree", "add", "-q", "-b", "feature/x", other)
	// Contained, the commit is refused (the worktree's git dir is not the
	// check's); either way nothing outside the throwaway worktree changes.
	c := shCheck("writer", "echo changed > tracked.txt; echo new > new.txt; git add -A; git -c user.name=c -c user.email=c@c commit -qm x; exit 0")
	if got, _ := runOK(t, dir, []config.Check{c}, commit); got[0].Result != Pass {
		data, _ := os.ReadFile(got[0].Log)
		t.Fatalf("%+v\n%s", got[0], data)
	}
	if st := fwtest.GitOut(t, dir, "status", "--porcelain"); st != "" {
		t.Errorf("the project's checkout changed:\n%s", st)
	}
	if head := fwtest.GitOut(t, dir, "rev-parse", "HEAD"); head != commit {
		t.Errorf("HEAD moved to %s", head)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "tracked.txt")); string(data) != "v1\n" {
		t.Errorf("tracked.txt is %q", data)
	}
	if st := fwtest.GitOut(t, other, "status", "--porcelain"); st != "" || fwtest.GitOut(t, other, "rev-parse", "HEAD") != commit {
		t.Errorf("another worktree changed:\n%s", st)
	}
	fwtest.GitOut(t, dir, "worktree", "remove", other)
	noCheckWorktrees(t, dir)
}

// A check runs the candidate's code: it writes its worktree and its temp
// dir, and nothing the gate trusts.
func TestChecksAreContained(t *testing.T) {
	if _, err := sandbox.ABI(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI runs the sandbox tests, but %v", err)
		}
		t.Skipf("no sandbox here: %v", err)
	}
	dir, commit := checksRepo(t)
	outside := t.TempDir()
	try := func(name, target string) string {
		return "if echo x 2>/dev/null >" + target + "; then echo '" + name + ": WROTE'; else echo '" + name + ": denied'; fi; "
	}
	c := shCheck("contained", try("project", `"$PROJECT/tracked.txt"`)+try("records", `"$PROJECT/var/fleet/checks/forged.json"`)+
		try("git", `"$PROJECT/.git/config"`)+try("outside", `"$OUTSIDE/x"`)+try("worktree", "own.txt")+try("tmp", `"$TMPDIR/x"`))
	c.Env = map[string]string{"PROJECT": dir, "OUTSIDE": outside}
	got, _ := runOK(t, dir, []config.Check{c}, commit)
	data, _ := os.ReadFile(got[0].Log)
	for _, want := range []string{"project: denied", "records: denied", "git: denied", "outside: denied", "worktree: WROTE", "tmp: WROTE"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the check's log lacks %q:\n%s", want, data)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "tracked.txt")); string(b) != "v1\n" {
		t.Errorf("tracked.txt is %q", b)
	}
}

// A failing check that leaves a daemon behind to rewrite its stored
// "fail" as "pass" once the runner has looked away: contained, the daemon
// writes nothing the gate reads, and the check stays failed.
func TestChecksDaemonCannotForgeItsResult(t *testing.T) {
	if _, err := sandbox.ABI(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI runs the sandbox tests, but %v", err)
		}
		t.Skipf("no sandbox here: %v", err)
	}
	dir, commit := checksRepo(t)
	forger := `find "$PROJECT/var/fleet/checks" -name '*.json' -exec sed -i 's/"fail"/"pass"/g' {} + 2>/dev/null; touch "$PROJECT/.forged-$$" 2>/dev/null`
	c := shCheck("liar", `setsid sh -c 'sleep 1; `+strings.ReplaceAll(forger, "'", `'\''`)+`' </dev/null >/dev/null 2>&1 & sleep 0.5; exit 1`)
	c.Env = map[string]string{"PROJECT": dir}
	got, _ := runOK(t, dir, []config.Check{c}, commit)
	if got[0].Result != Fail {
		t.Fatalf("%+v", got[0])
	}
	time.Sleep(2500 * time.Millisecond)
	tree, err := TreeOf(dir, commit)
	if err != nil {
		t.Fatal(err)
	}
	if again := CachedChecks(dir, []config.Check{c}, tree); len(again) != 1 || again[0].Result != Fail {
		t.Errorf("after the daemon: %+v", again)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".forged-*")); len(m) > 0 {
		t.Errorf("the daemon wrote in the project: %v", m)
	}
}

func TestChecksCancelKillsTheCheck(t *testing.T) {
	dir, commit := checksRepo(t)
	observed(t, dir)
	pid := filepath.Join(t.TempDir(), "pid")
	checks := []config.Check{shCheck("slow", "printf %s $$ > "+pid+".tmp; mv "+pid+".tmp "+pid+"; sleep 30"), shCheck("after", "true")}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for range 1000 {
			if _, err := os.Stat(pid); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	got, err := RunChecks(ctx, dir, checks, commit, nil)
	if err != context.Canceled || len(got) != 2 || got[0].Result != Missing || got[1].Result != Missing {
		t.Fatalf("%+v %v", got, err)
	}
	p := fwtest.ReadPID(t, pid)
	fwtest.WaitFor(t, "the check to be gone", 5*time.Second, func() bool { return !fwtest.Alive(p) || fwtest.Zombie(p) })
	tree, _ := TreeOf(dir, commit)
	if c := CachedChecks(dir, checks, tree); c[0].Result != Missing || c[1].Result != Missing {
		t.Errorf("after cancel: %+v", c)
	}
	noCheckWorktrees(t, dir)
}

func TestChecksSecondRunnerWaitsForTheFirst(t *testing.T) {
	dir, commit := checksRepo(t)
	observed(t, dir)
	tmp := t.TempDir()
	count, started := filepath.Join(tmp, "count"), filepath.Join(tmp, "started")
	c := shCheck("once", "touch "+started+"; echo run >> "+count+"; sleep 1")
	tree, _ := TreeOf(dir, commit)
	done := make(chan []CheckResult, 2)
	for range 2 {
		go func() {
			got, _ := RunChecks(context.Background(), dir, []config.Check{c}, commit, nil)
			done <- got
		}()
	}
	fwtest.WaitFor(t, "the check to start", 10*time.Second, func() bool { _, err := os.Stat(started); return err == nil })
	before := time.Now().Add(-time.Second)
	if r := CachedChecks(dir, []config.Check{c}, tree)[0]; r.Result != Running || r.Since.Before(before.Add(-10*time.Second)) || r.Since.After(time.Now()) {
		t.Errorf("while it runs: %s since %v (now %v)", r.Result, r.Since, time.Now())
	}
	for range 2 {
		if got := <-done; len(got) != 1 || got[0].Result != Pass {
			t.Errorf("%+v", got)
		}
	}
	if data, _ := os.ReadFile(count); string(data) != "run\n" {
		t.Errorf("ran %q", data)
	}
}

// TestChecksRunnerChild is the runner the kill -9 test starts as a child:
// this test binary, told what to run through the environment.
func TestChecksRunnerChild(t *testing.T) {
	spec := os.Getenv("FLEETWATCH_CHECKS_CHILD")
	if spec == "" {
		return
	}
	var job struct {
		Dir, Commit string
		Checks      []config.Check
	}
	if err := json.Unmarshal([]byte(spec), &job); err != nil {
		t.Fatal(err)
	}
	RunChecks(context.Background(), job.Dir, job.Checks, job.Commit, os.Stderr)
}

func TestChecksKilledRunnerLeavesNoPass(t *testing.T) {
	dir, commit := checksRepo(t)
	observed(t, dir)
	tmp := t.TempDir()
	pid, mark, orphan := filepath.Join(tmp, "pid"), filepath.Join(tmp, "mark"), filepath.Join(tmp, "orphan")
	c := shCheck("test", "if [ -e "+mark+" ]; then echo second; exit 0; fi; touch "+mark+
		"; sleep 60 & printf %s $! > "+orphan+"; printf %s $$ > "+pid+".tmp; mv "+pid+".tmp "+pid+"; sleep 30")
	spec, _ := json.Marshal(map[string]any{"Dir": dir, "Commit": commit, "Checks": []config.Check{c}})
	child := exec.Command(os.Args[0], "-test.run=^TestChecksRunnerChild$")
	child.Env = append(os.Environ(), "FLEETWATCH_CHECKS_CHILD="+string(spec))
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	fwtest.WaitFor(t, "the check to start", 20*time.Second, func() bool { _, err := os.Stat(pid); return err == nil })
	tree, _ := TreeOf(dir, commit)
	if r := CachedChecks(dir, []config.Check{c}, tree)[0].Result; r != Running {
		t.Errorf("while it runs: %s", r)
	}
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	p := fwtest.ReadPID(t, pid)
	fwtest.WaitFor(t, "the orphaned check to end", 5*time.Second, func() bool { return !fwtest.Alive(p) || fwtest.Zombie(p) })
	if r := CachedChecks(dir, []config.Check{c}, tree)[0].Result; r != Missing {
		t.Errorf("after kill -9: %s", r)
	}
	if names, _ := os.ReadDir(filepath.Join(dir, "var/fleet/checks/wt")); len(names) != 1 {
		t.Errorf("the killed runner's worktree: %v", names)
	}
	left := fwtest.ReadPID(t, orphan)
	if !fwtest.Alive(left) {
		t.Errorf("the background process died with its runner: the test proves nothing")
	}
	got, _ := runOK(t, dir, []config.Check{c}, commit)
	if got[0].Result != Pass {
		t.Errorf("rerun: %+v", got[0])
	}
	fwtest.WaitFor(t, "what the killed check left running to be gone", 5*time.Second, func() bool { return !fwtest.Alive(left) || fwtest.Zombie(left) })
	if data, _ := os.ReadFile(got[0].Log); string(data) != "second\n" {
		t.Errorf("rerun's log %q", data)
	}
	noCheckWorktrees(t, dir)
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Second: "1s", 90 * time.Second: "1m30s", 10 * time.Minute: "10m", 24 * time.Hour: "24h",
		time.Hour + time.Minute: "1h1m", 500 * time.Millisecond: "500ms",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
}

func TestTreeOfRefusesNonCommits(t *testing.T) {
	dir, _ := checksRepo(t)
	for _, bad := range []string{"", "--all", "nope", strings.Repeat("0", 40)} {
		if _, err := TreeOf(dir, bad); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if got := CachedChecks(dir, []config.Check{{Name: "x", Run: []string{"true"}}}, "../../etc"); got[0].Result != Missing {
		t.Errorf("%+v", got)
	}
}

func TestChecksLogKeepsHeadAndTail(t *testing.T) {
	dir, commit := checksRepo(t)
	c := shCheck("loud", "echo first; head -c 18000000 /dev/zero | tr '\\0' a; echo; echo ok-at-end")
	c.ExpectOutput = regexp.MustCompile("ok-at-end")
	got, _ := runOK(t, dir, []config.Check{c}, commit)
	if got[0].Result != Pass {
		t.Fatalf("%+v", got[0])
	}
	data, _ := os.ReadFile(got[0].Log)
	if len(data) > logHead+logTail+100 || !strings.HasPrefix(string(data), "first\n") || !strings.HasSuffix(string(data), "a\nok-at-end\n") ||
		!strings.Contains(string(data), " bytes of output left out]") {
		t.Errorf("log of %d bytes: %q ... %q", len(data), data[:20], data[len(data)-40:])
	}
}

func TestChecksIgnoringSIGTERMAreKilled(t *testing.T) {
	dir, commit := checksRepo(t)
	old := checkGrace
	checkGrace = 300 * time.Millisecond
	defer func() { checkGrace = old }()
	c := shCheck("stubborn", "trap '' TERM; sleep 30")
	c.Timeout = 500 * time.Millisecond
	start := time.Now()
	if got, _ := runOK(t, dir, []config.Check{c}, commit); got[0].Result != Timeout {
		t.Errorf("%+v", got[0])
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	noCheckWorktrees(t, dir)
}

func TestChecksOfCommitsInParallel(t *testing.T) {
	dir, _ := checksRepo(t)
	var commits []string
	for i := range 4 {
		os.WriteFile(filepath.Join(dir, "tracked.txt"), []byte(strconv.Itoa(i)+"\n"), 0o644)
		fwtest.GitOut(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "c")
		commits = append(commits, fwtest.GitOut(t, dir, "rev-parse", "HEAD"))
	}
	checks := []config.Check{shCheck("content", `test "$(cat tracked.txt)" = "$WANT"`), shCheck("port", `test -n "$PORT"`)}
	errs := make(chan error, len(commits))
	for i, commit := range commits {
		cs := append([]config.Check(nil), checks...)
		cs[0].Env = map[string]string{"WANT": strconv.Itoa(i)}
		go func() {
			got, err := RunChecks(context.Background(), dir, cs, commit, nil)
			if err == nil && (got[0].Result != Pass || got[1].Result != Pass) {
				err = errors.New(commit + ": " + string(got[0].Result) + " " + string(got[1].Result))
			}
			errs <- err
		}()
	}
	for range commits {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	noCheckWorktrees(t, dir)
}

func TestChecksRefuseBadNames(t *testing.T) {
	dir, commit := checksRepo(t)
	for _, name := range []string{"../x", "a/b", ""} {
		if _, err := RunChecks(context.Background(), dir, []config.Check{{Name: name, Run: []string{"true"}}}, commit, nil); err == nil {
			t.Errorf("%q ran", name)
		}
	}
	if _, err := RunChecks(context.Background(), dir, []config.Check{{Name: "empty"}}, commit, nil); err == nil {
		t.Error("an empty run ran")
	}
}

// BenchmarkCachedChecks reads 200 candidates' stored results for three
// checks, as `queue list` does.
func BenchmarkCachedChecks(b *testing.B) {
	dir := b.TempDir()
	checks := []config.Check{
		{Name: "test", Run: []string{"go", "test", "./..."}},
		{Name: "vet", Run: []string{"go", "vet", "./..."}},
		{Name: "lint", Run: []string{"lint"}},
	}
	var trees []string
	for i := range 200 {
		tree := strings.Repeat("0", 34) + strconv.Itoa(100000+i)
		trees = append(trees, tree)
		for _, c := range checks[:2] {
			f := filesOf(dir, tree, c)
			os.MkdirAll(f.dir, 0o755)
			data, _ := json.Marshal(checkRecord{CheckResult: CheckResult{Name: c.Name, Result: Pass}, Tree: tree})
			os.WriteFile(f.abs(".json"), data, 0o644)
			os.WriteFile(f.abs(".lock"), nil, 0o644)
		}
	}
	for b.Loop() {
		for _, tree := range trees {
			if r := CachedChecks(dir, checks, tree); r[0].Result != Pass || r[2].Result != Missing {
				b.Fatal(r)
			}
		}
	}
}

// A stored result counts only for the tree and the spec it names: a
// passing record copied into another tree's folder, or over another
// spec's file, reads as missing, and the check runs for real.
func TestChecksRecordCopiedElsewhereDoesNotCount(t *testing.T) {
	dir, commit := checksRepo(t)
	tree, _ := TreeOf(dir, commit)
	os.WriteFile(filepath.Join(dir, "tracked.txt"), []byte("v2\n"), 0o644)
	fwtest.GitOut(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "v2")
	other, _ := TreeOf(dir, "HEAD")
	pass, fail := shCheck("test", "true"), shCheck("test", "false")
	runOK(t, dir, []config.Check{pass}, commit)
	record, err := os.ReadFile(filesOf(dir, tree, pass).abs(".json"))
	if err != nil {
		t.Fatal(err)
	}
	copyTo := func(f checkFiles) {
		os.MkdirAll(f.dir, 0o755)
		if err := os.WriteFile(f.abs(".json"), record, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyTo(filesOf(dir, other, pass))
	copyTo(filesOf(dir, tree, fail))
	for _, tc := range []struct {
		name  string
		check config.Check
		tree  string
	}{{"another tree", pass, other}, {"another spec", fail, tree}} {
		if got := CachedChecks(dir, []config.Check{tc.check}, tc.tree); got[0].Result != Missing {
			t.Errorf("%s: a copied record reads as %s", tc.name, got[0].Result)
		}
	}
	if got, _ := runOK(t, dir, []config.Check{fail}, commit); got[0].Result != Fail {
		t.Errorf("the real check on a forged pass: %s", got[0].Result)
	}
}

// A runner's cleaner takes any unlocked folder for a dead runner's, so it
// may remove one that a parallel runner has just made and not yet locked:
// that runner makes another instead of failing its check (a bisection's
// parallel checks failed with "no such file or directory" before).
func TestCheckWorktreeSurvivesParallelCleaners(t *testing.T) {
	dir, commit := checksRepo(t)
	stop := make(chan struct{})
	var cleaners sync.WaitGroup
	for range 3 {
		cleaners.Add(1)
		go func() {
			defer cleaners.Done()
			for {
				select {
				case <-stop:
					return
				default:
					cleanCheckWorktrees(dir)
				}
			}
		}()
	}
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			for range 15 {
				wt, err := addCheckWorktree(dir, commit, "race")
				if err != nil {
					errs <- err
					return
				}
				if _, err := os.Stat(filepath.Join(wt.path, "tracked.txt")); err != nil {
					wt.remove()
					errs <- err
					return
				}
				wt.remove()
			}
			errs <- nil
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	close(stop)
	cleaners.Wait()
	noCheckWorktrees(t, dir)
}
