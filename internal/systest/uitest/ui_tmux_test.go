package uitest

// The whole program in a real terminal: tmux runs fleetwatch (this test
// binary, re-executed as fleetwatch, so a -race run checks the UI too), the
// test types keys with send-keys and reads the screen with capture-pane.
// Every wait polls the screen or the disk against a deadline.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

const (
	// tmuxWait bounds every wait for the screen or the disk: generous, for a
	// slow two-core CI box running the race detector.
	tmuxWait = 10 * time.Second
	// tmuxStartWait bounds the first screen, which may build the demo's git
	// history first.
	tmuxStartWait = 30 * time.Second
	// tmuxLiveRefresh bounds how long a change made on disk by someone else takes
	// to reach the screen with no key pressed. It proves the screen follows
	// without a key, not the speed: that is BenchmarkChangeToData's job, and a
	// loaded CI machine must not fail here.
	tmuxLiveRefresh = 5 * time.Second
)

var tmuxSessions atomic.Int64

// tmuxTerm is one fleetwatch process in a detached tmux session on a server
// of its own.
type tmuxTerm struct {
	t      *testing.T
	sock   string // tmux -L name
	path   string // the server's socket file
	status string // file the wrapper writes fleetwatch's exit code to
	screen string // the last capture
}

// needTmux skips without tmux on a developer box; CI must have it.
func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("tmux is not installed (CI installs it; see .ci/run)")
		}
		t.Fatal("CI is set but tmux is not installed; .ci/run installs it")
	}
}

// startTmux runs `fleetwatch args...` in dir inside a new tmux server, on a
// cols×rows terminal. env adds variables to fleetwatch's environment.
func startTmux(t *testing.T, cols, rows int, dir string, env []string, args ...string) *tmuxTerm {
	t.Helper()
	needTmux(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tt := &tmuxTerm{
		t:      t,
		sock:   fmt.Sprintf("fwtest-%d-%d", os.Getpid(), tmuxSessions.Add(1)),
		status: filepath.Join(t.TempDir(), "status"),
	}
	// The tmux server is started by this command, so its environment is the
	// session's: ours, minus anything that would change what is tested.
	var base []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "TMUX", "TMUX_PANE", "NO_COLOR", "COLORTERM", fwtest.AsFleetwatch, fwtest.BarrierEnv:
			continue
		case "CI":
			// termenv turns colour off whenever CI is set; the pane is a
			// real terminal, so the program must not see it.
			continue
		}
		base = append(base, kv)
	}
	if os.Getenv("TERM") == "" {
		base = append(base, "TERM=xterm-256color") // for the tmux client; the pane gets tmux's own
	}
	base = append(base, fwtest.AsFleetwatch+"=1", "USER=tester", "GORACE=atexit_sleep_ms=0", "FW_TMUX_STATUS="+tt.status)
	tmuxArgs := []string{"-f", os.DevNull, "-L", tt.sock, "new-session", "-d", "-s", "fw",
		"-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), "-c", dir}
	for _, kv := range env {
		tmuxArgs = append(tmuxArgs, "-e", kv)
	}
	tmuxArgs = append(tmuxArgs, "--", "sh", "-c", `"$0" "$@"; echo $? > "$FW_TMUX_STATUS"`, exe)
	cmd := exec.Command("tmux", append(tmuxArgs, args...)...)
	cmd.Env = base
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	if out, err := tt.tmux("display-message", "-p", "-t", "fw", "#{socket_path}"); err == nil {
		tt.path = strings.TrimSpace(out)
	}
	t.Cleanup(func() {
		_ = exec.Command("tmux", "-L", tt.sock, "kill-server").Run()
		if tt.path != "" {
			// The server leaves its socket file behind when its last session ends.
			_ = os.Remove(tt.path)
		}
	})
	return tt
}

func (tt *tmuxTerm) tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-L", tt.sock}, args...)...).CombinedOutput()
	return string(out), err
}

// capture is the visible screen; extra flags as capture-pane's (-e escapes,
// -a the normal screen behind the alternate one, -J joined lines).
func (tt *tmuxTerm) capture(flags ...string) string {
	tt.t.Helper()
	out, err := tt.tmux(append([]string{"capture-pane", "-p", "-t", "fw"}, flags...)...)
	if err != nil {
		tt.t.Fatalf("capture-pane: %v: %s\nlast screen:\n%s", err, out, tt.screen)
	}
	return out
}

// keys sends tmux key names (Right, Tab, Enter, q …).
func (tt *tmuxTerm) keys(keys ...string) {
	tt.t.Helper()
	if out, err := tt.tmux(append([]string{"send-keys", "-t", "fw"}, keys...)...); err != nil {
		tt.t.Fatalf("send-keys %q: %v: %s\nlast screen:\n%s", keys, err, out, tt.screen)
	}
}

// typeText types s literally.
func (tt *tmuxTerm) typeText(s string) {
	tt.t.Helper()
	if out, err := tt.tmux("send-keys", "-t", "fw", "-l", s); err != nil {
		tt.t.Fatalf("send-keys -l %q: %v: %s", s, err, out)
	}
}

// waitFor polls until ok holds for the screen (and whatever else ok looks
// at), failing with the last screen after within; it returns the screen.
func (tt *tmuxTerm) waitFor(within time.Duration, what string, ok func(screen string) bool) string {
	tt.t.Helper()
	deadline := time.Now().Add(within)
	for {
		tt.screen = tt.capture()
		if ok(tt.screen) {
			return tt.screen
		}
		if time.Now().After(deadline) {
			tt.t.Fatalf("after %v the screen does not show %s:\n%s", within, what, tt.screen)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitShows waits for a screen that matches every pattern (regular expressions).
func (tt *tmuxTerm) waitShows(within time.Duration, patterns ...string) string {
	tt.t.Helper()
	res := make([]*regexp.Regexp, len(patterns))
	for i, p := range patterns {
		res[i] = regexp.MustCompile(p)
	}
	return tt.waitFor(within, strings.Join(patterns, " and "), func(s string) bool {
		for _, re := range res {
			if !re.MatchString(s) {
				return false
			}
		}
		return true
	})
}

// laneShort are the UI's abbreviations for the one-line lane strip.
var laneShort = map[string]string{"drafts": "draft", "bugs": "bugs", "features": "feat", "in-progress": "prog",
	"review-needed": "review", "ambiguous": "amb", "blocked": "blkd", "completed": "done"}

// laneOpen matches lane shown with n plans (a number or a pattern): the wide
// layout's box title `bugs · 2` or the narrow strip's `[bugs 2]`.
func laneOpen(lane, n string) string {
	return `(?:\b` + lane + ` · ` + n + `\b|\[` + lane + ` ` + n + `\])`
}

// laneCount matches lane's count: in the wide Lanes box `drafts   2│`, in
// the narrow strip `drafts 2` or `draft 2`, bracketed when selected.
func laneCount(lane string, n int) string {
	c := strconv.Itoa(n)
	return `(?m)(?:\b` + lane + `\s+` + c + `│|(?:^|[\s│\[])(?:` + lane + `|` + laneShort[lane] + `) ` + c + `(?:$|[\s│\]]))`
}

// waitExit waits for fleetwatch to exit and the tmux session to end, and
// returns the exit code.
func (tt *tmuxTerm) waitExit() int {
	tt.t.Helper()
	deadline := time.Now().Add(tmuxWait)
	for {
		if _, err := tt.tmux("has-session", "-t", "fw"); err != nil {
			break
		}
		if time.Now().After(deadline) {
			tt.t.Fatalf("the tmux session is still running %v after quitting:\n%s", tmuxWait, tt.capture())
		}
		time.Sleep(20 * time.Millisecond)
	}
	b, err := os.ReadFile(tt.status)
	if err != nil {
		tt.t.Fatalf("the session ended but fleetwatch's exit code was not recorded: %v\nlast screen:\n%s", err, tt.screen)
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		tt.t.Fatalf("exit code %q: %v", b, err)
	}
	return code
}

// waitOnDisk waits until every rel in present exists under dir's .plans/
// and every rel in gone does not.
func (tt *tmuxTerm) waitOnDisk(dir string, present, gone []string) {
	tt.t.Helper()
	deadline := time.Now().Add(tmuxWait)
	for {
		ok := true
		for _, rel := range present {
			ok = ok && fwtest.Exists(dir, rel)
		}
		for _, rel := range gone {
			ok = ok && !fwtest.Exists(dir, rel)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tt.t.Fatalf("after %v want %v on disk and %v gone; screen:\n%s", tmuxWait, present, gone, tt.capture())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTmuxOperatorFlow drives the real UI through an operator's session:
// lanes, promote, park with a reason, the Leases pane and recover, live
// refresh from changes other processes make, and quit; on a 100×30
// terminal and on an 80×24 one, whose layout differs.
func TestTmuxOperatorFlow(t *testing.T) {
	// Not parallel: the live-refresh bound is about the UI, not a loaded box.
	needTmux(t)
	for _, size := range [][2]int{{100, 30}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) { tmuxOperatorFlow(t, size[0], size[1]) })
	}
}

func tmuxOperatorFlow(t *testing.T, cols, rows int) {
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "drafts/idea.md", Fields: "Value: high; Preferred models: mid"},
		fwtest.Plan{Rel: "drafts/later.md", Fields: "Preferred models: mid"},
		fwtest.Plan{Rel: "bugs/crash.md", Fields: "Priority: P1; Preferred models: mid"},
		fwtest.Plan{Rel: "features/search.md", Fields: "Preferred models: mid"},
		fwtest.Plan{Rel: "features/export.md", Fields: "Preferred models: mid"},
		fwtest.Plan{Rel: "in-progress/stale.md", Fields: "Preferred models: small"},
		fwtest.Plan{Rel: "in-progress/busy.md", Fields: "Preferred models: mid"},
	)
	// small-2 claimed stale two hours ago and died; its lease ran out an hour
	// ago. mid-1 is working on busy.
	boardPutLease(t, dir, "in-progress/stale.md", "small-2", 7200, 3600, "bugs/stale.md")
	boardPutLease(t, dir, "in-progress/busy.md", "mid-1", 600, 3600, "features/busy.md")

	tt := startTmux(t, cols, rows, dir, nil, "--root", dir)

	// The lanes and the plans of the first lane, bugs.
	tt.waitShows(tmuxStartWait, `\b`+regexp.QuoteMeta(filepath.Base(dir))+` · (?:7 plans · )?(?:2 leases \()?1 expired`, `\[1 Plans\]`,
		laneCount("drafts", 2), laneCount("bugs", 1), laneCount("features", 2), laneCount("in-progress", 2), laneCount("completed", 0),
		laneOpen("bugs", "1"), `▸ ● crash\b`)

	// Right moves to features, Left twice to drafts.
	tt.keys("Right")
	tt.waitShows(tmuxWait, laneOpen("features", "2"), `\bsearch\b`, `\bexport\b`)
	tt.keys("Left")
	tt.waitShows(tmuxWait, laneOpen("bugs", "1"), `\bcrash\b`)
	tt.keys("Left")
	tt.waitShows(tmuxWait, laneOpen("drafts", "2"), `▸\s+idea\b`, `\blater\b`)

	// p on a draft, tab to bugs, enter: the file moves and the status says so.
	tt.keys("p")
	tt.waitShows(tmuxWait, `Promote idea`, `\[features\]`, `\bbugs\b`)
	tt.keys("Tab")
	tt.waitShows(tmuxWait, `Promote idea`, `\[bugs\]`)
	tt.keys("Enter")
	tt.waitOnDisk(dir, []string{"bugs/idea.md"}, []string{"drafts/idea.md"})
	tt.waitShows(tmuxWait, `✓ promoted idea → bugs`, laneOpen("drafts", "1"), laneCount("bugs", 2))

	// a on a ready plan, a reason, enter: it is in blocked/ with the reason logged.
	tt.keys("Right")
	tt.waitShows(tmuxWait, laneOpen("bugs", "2"), `▸ ● crash\b`, `\bidea\b`)
	tt.keys("a")
	tt.waitShows(tmuxWait, `Park crash`, `\[blocked\]`)
	tt.typeText("waiting on the vendor")
	tt.waitShows(tmuxWait, `waiting on the vendor`)
	tt.keys("Enter")
	tt.waitOnDisk(dir, []string{"blocked/crash.md"}, []string{"bugs/crash.md"})
	tt.waitShows(tmuxWait, `✓ parked crash in blocked`, laneOpen("bugs", "1"), laneCount("blocked", 1))
	if log, err := os.ReadFile(filepath.Join(dir, ".plans", "logs", "events.jsonl")); err != nil ||
		!strings.Contains(string(log), `"reason":"waiting on the vendor"`) {
		t.Errorf("the park reason is not in the event log (%v):\n%s", err, log)
	}

	// 2: the Leases pane lists the expired lease first and marks it; R +
	// enter recovers it. (The EXPIRED text is read off the row while the
	// cursor is on the other one: see TestTmuxLeaseRowsStayCurrent.)
	tt.keys("2")
	tt.waitShows(tmuxWait, `\[2 Leases\]`, `▸ ✗ in-progress/stale\.md\s+small-2`, `● in-progress/busy\.md\s+mid-1`)
	tt.keys("j")
	tt.waitShows(tmuxWait, `✗ in-progress/stale\.md\s+small-2\s+(?:bugs/stale\.md\s+)?2h0\dm ago\s+EXPIRED 1h0\dm ago`, `▸ ● in-progress/busy\.md`)
	tt.keys("k")
	tt.waitShows(tmuxWait, `▸ ✗ in-progress/stale\.md`)
	tt.keys("R")
	tt.waitShows(tmuxWait, `Recover stale`, `lease expired`)
	tt.keys("Enter")
	tt.waitShows(tmuxWait, `✓ recovered stale: now held by operator-tester`, `· 2 leases\s`)
	l := boardReadLease(t, dir, "in-progress/stale.md")
	if l["agent_id"] != "operator-tester" || l["expires_at"].(float64) < float64(time.Now().Unix())+3000 {
		t.Errorf("after recover the lease is %v, want operator-tester's for an hour", l)
	}
	// The origin column shows when it fits whole.
	screen := tt.waitShows(tmuxWait, `● in-progress/stale\.md\s+operator-test\S*\s+(?:bugs/stale\.md\s+)?\S+ ago\s+in (59m|1h)`)
	if strings.Contains(screen, "EXPIRED") || strings.Contains(screen, "expired)") {
		t.Errorf("the recovered lease still shows as expired:\n%s", screen)
	}

	// Live refresh, no key pressed: a file moved by hand, then a promote by
	// another fleetwatch process, each reach the screen within about a second.
	tt.keys("1")
	tt.waitShows(tmuxWait, `\[1 Plans\]`, laneOpen("bugs", "1"), `▸ ● idea\b`, laneCount("features", 2), laneCount("completed", 0))
	if err := os.Rename(filepath.Join(dir, ".plans", "features", "export.md"), filepath.Join(dir, ".plans", "completed", "export.md")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	tt.waitShows(tmuxLiveRefresh, laneCount("features", 1), laneCount("completed", 1))
	t.Logf("a rename by hand reached the screen in %v", time.Since(start).Round(time.Millisecond))
	if r := fwtest.Run(t, dir, "promote", "later", "--to", "bugs", "--agent-id", "someone-else"); r.Code != 0 {
		t.Fatalf("promote from another process: %v", r)
	}
	start = time.Now()
	tt.waitShows(tmuxLiveRefresh, laneOpen("bugs", "2"), `\blater\b`, laneCount("drafts", 0))
	t.Logf("a promote by another process reached the screen in %v", time.Since(start).Round(time.Millisecond))

	// q quits cleanly and the session ends.
	tt.keys("q")
	if code := tt.waitExit(); code != 0 {
		t.Fatalf("fleetwatch exited %d after q; last screen:\n%s", code, tt.screen)
	}
}

// TestTmuxLeaseRowsStayCurrent: the Leases pane shows the selected lease
// whole, and its countdowns run down while the screen is open.
func TestTmuxLeaseRowsStayCurrent(t *testing.T) {
	t.Parallel()
	needTmux(t)
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "in-progress/stale.md", Fields: "Preferred models: small"},
		fwtest.Plan{Rel: "in-progress/busy.md", Fields: "Preferred models: mid"},
	)
	boardPutLease(t, dir, "in-progress/stale.md", "small-2", 7200, 3600, "bugs/stale.md")
	boardPutLease(t, dir, "in-progress/busy.md", "mid-1", 600, 3600, "features/busy.md")
	// Wide, so the Plans pane is narrower than the Leases pane.
	tt := startTmux(t, 120, 30, dir, nil, "--root", dir)
	// The board is loaded while the Plans pane is showing; then 2.
	tt.waitShows(tmuxStartWait, `2 plans · 2 leases \(1 expired\)`, laneOpen("in-progress", "2"))
	tt.keys("2")
	tt.waitShows(tmuxWait, `\[2 Leases\]`, `▸ ✗ in-progress/stale\.md\s+small-2`)
	tt.waitShows(tmuxWait, `▸ ✗ in-progress/stale\.md\s+small-2\s+(?:bugs/stale\.md\s+)?2h0\dm ago\s+EXPIRED 1h0\dm ago`)

	// busy's time left goes down by the second.
	re := regexp.MustCompile(`in-progress/busy\.md\s+mid-1\s+(?:features/busy\.md\s+)?\S+ ago\s+in (\S+)`)
	first := re.FindStringSubmatch(tt.screen)
	if first == nil {
		t.Fatalf("no countdown for busy:\n%s", tt.screen)
	}
	tt.waitFor(tmuxWait, "busy's countdown moving on from "+first[1], func(s string) bool {
		m := re.FindStringSubmatch(s)
		return m != nil && m[1] != first[1]
	})
	tt.keys("q")
	if code := tt.waitExit(); code != 0 {
		t.Fatalf("fleetwatch exited %d", code)
	}
}

// TestTmuxDemo opens `fleetwatch demo` in colour and under NO_COLOR: it shows
// jotter, works, quits cleanly and removes the folder it printed.
func TestTmuxDemo(t *testing.T) {
	t.Parallel()
	needTmux(t)
	for _, noColor := range []bool{false, true} {
		name := "color"
		if noColor {
			name = "NO_COLOR"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			env := []string{"TMPDIR=" + tmp}
			if noColor {
				env = append(env, "NO_COLOR=1")
			}
			tt := startTmux(t, 100, 30, tmp, env, "demo")
			tt.waitShows(tmuxStartWait, `\bjotter · \$\d+\.\d\d today · (?:\d+ plans · 3 leases \()?1 expired`,
				laneOpen("bugs", "2"), `note-html-injection`, `utc-dates-in-list`, `\[1 Plans\]`)

			// The path printed before the UI opened is on the normal screen,
			// behind the alternate one.
			m := regexp.MustCompile(`demo project: (\S+) \(removed when the UI closes`).FindStringSubmatch(tt.capture("-a", "-J"))
			if m == nil {
				t.Fatalf("demo did not print its project path:\n%s", tt.capture("-a", "-J"))
			}
			project := m[1]
			if !strings.HasPrefix(project, tmp+string(filepath.Separator)) || filepath.Base(project) != "jotter" {
				t.Errorf("demo project %s is not jotter under TMPDIR %s", project, tmp)
			}
			if _, err := os.Stat(filepath.Join(project, ".plans")); err != nil {
				t.Fatalf("the demo project is not there while the UI runs: %v", err)
			}

			tt.keys("Right")
			screen := tt.waitShows(tmuxWait, laneOpen("features", `\d+`), `full-text-search`, `▸ ○ rotate-signing-key`, `person: alice`)
			escaped := tt.capture("-e")
			if noColor {
				// The selection is reverse video, which tmux writes back as
				// \x1b[7m … and a reset; nothing else: no colour, no italic.
				rest := regexp.MustCompile(`\x1b\[7m|\x1b\[0m(\x1b\[39m)?(\x1b\[49m)?`).ReplaceAllString(escaped, "")
				if strings.Contains(rest, "\x1b[") {
					t.Errorf("NO_COLOR screen has escape sequences beyond the selection's reverse video:\n%q", escaped)
				}
				if !strings.Contains(escaped, "\x1b[7m▸ ○ rotate-signing-key") {
					t.Errorf("NO_COLOR: the selected row is not reverse video:\n%q", escaped)
				}
				// Without colour the selection and the pane still show in text.
				if !regexp.MustCompile(`▸ features|\[features \d+\]`).MatchString(screen) {
					t.Errorf("NO_COLOR: the selected lane is not marked:\n%s", screen)
				}
			} else if !strings.Contains(escaped, "\x1b[") {
				t.Errorf("colour screen has no escape sequences:\n%q", escaped)
			}

			tt.keys("q")
			if code := tt.waitExit(); code != 0 {
				t.Fatalf("demo exited %d after q; last screen:\n%s", code, tt.screen)
			}
			if _, err := os.Stat(project); !os.IsNotExist(err) {
				t.Errorf("demo left its project %s behind (%v)", project, err)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "fleetwatch-demo-*")); len(left) > 0 {
				t.Errorf("demo left %v behind", left)
			}
		})
	}
}

// boardReadLease reads rel's lease file.
func boardReadLease(t *testing.T, dir, rel string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ".plans", ".leases", strings.ReplaceAll(rel, "/", "__")+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("lease of %s: %v\n%s", rel, err, b)
	}
	return m
}

// An idle UI (no leases, so no countdown; nothing changing on disk) is
// quiet: the watcher blocks in the kernel, no timer of ours runs, and only
// Bubble Tea's frame ticker wakes it (about 0.7% of a core at 30 frames a
// second). A spin or a polling loop would use a hundred times more.
func TestTmuxIdleIsQuiet(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/a.md"}, fwtest.Plan{Rel: "features/b.md"}, fwtest.Plan{Rel: "drafts/c.md"})
	tt := startTmux(t, 100, 30, dir, nil, "--root", dir)
	tt.waitShows(tmuxStartWait, `\[1 Plans\]`, `\ba\b`)
	out, err := tt.tmux("display-message", "-p", "-t", "fw", "#{pane_pid}")
	if err != nil {
		t.Fatalf("pane pid: %v: %s", err, out)
	}
	shell := strings.TrimSpace(out)
	children, err := os.ReadFile("/proc/" + shell + "/task/" + shell + "/children")
	if err != nil || len(strings.Fields(string(children))) != 1 {
		t.Skipf("cannot find the UI process under the pane's shell %s: %v %q", shell, err, children)
	}
	pid := strings.Fields(string(children))[0]
	ticks := func() int {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		// Fields after the command name, which is in parentheses: utime and
		// stime are the 12th and 13th of them.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		u, _ := strconv.Atoi(f[11])
		s, _ := strconv.Atoi(f[12])
		return u + s
	}
	time.Sleep(2 * time.Second) // let the first preview and worktree loads finish
	before := ticks()
	time.Sleep(3 * time.Second)
	used := ticks() - before
	t.Logf("idle UI: %d clock ticks of CPU in 3 s", used)
	if used > 15 {
		t.Errorf("the idle UI used %d clock ticks (1/100 s) of CPU in 3 s, more than 5%% of a core", used)
	}
	tt.keys("q")
	tt.waitExit()
}
