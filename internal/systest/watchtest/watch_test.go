package watchtest

// Watchers: units and cron lines are checked as systemd and sh will read
// them, install and uninstall run against a temporary XDG_CONFIG_HOME with a
// fake systemctl that records its calls, and a timer run is simulated by
// executing the unit's ExecStart as systemd would split it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// oddName is a project folder with everything systemd and sh treat
// specially: blanks, both quotes, a specifier sign, a variable, a backslash.
const oddName = `my "app" it's 100% $HOME \o/`

// newOddTree scaffolds a project in a folder named oddName and writes plans.
func newOddTree(t *testing.T, plans ...fwtest.Plan) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), oddName)
	if r := fwtest.Run(t, t.TempDir(), "scaffold", dir); r.Code != 0 {
		t.Fatalf("scaffold: %v", r)
	}
	for i, p := range plans {
		fwtest.WritePlan(t, dir, p, time.Duration(len(plans)-i)*time.Minute)
	}
	return dir
}

// fakeSystemd puts a systemctl and a loginctl on PATH that record their
// arguments, one call a line, and answer like a running user manager.
type fakeSystemd struct {
	env  []string
	log  string
	xdg  string // XDG_CONFIG_HOME
	unit string // the unit folder under it
}

const fakeSystemctl = `#!/bin/sh
printf '%s\n' "$*" >> "$FAKE_SYSTEMD_LOG"
if [ "$2" = "${FAKE_SYSTEMD_FAIL:-}" ]; then echo "Failed to $2 unit: Access denied" >&2; exit 1; fi
case "$2" in
is-system-running) echo "${FAKE_SYSTEMD_STATE:-running}"; [ "${FAKE_SYSTEMD_STATE:-running}" = running ]; exit ;;
show)
  case "$3" in
  *.timer) printf 'ActiveState=active\nUnitFileState=enabled\nLastTriggerUSec=Sun 2026-11-29 10:00:00 UTC\nNextElapseUSecRealtime=\nNextElapseUSecMonotonic=%s\n' "${FAKE_NEXT:-3h 5min 2.500s}" ;;
  *.service) printf 'Result=success\nExecMainStatus=1\nExecMainExitTimestamp=Sun 2026-11-29 10:00:01 UTC\n' ;;
  esac ;;
esac
exit 0
`

const fakeLoginctl = `#!/bin/sh
printf 'loginctl %s\n' "$*" >> "$FAKE_SYSTEMD_LOG"
echo "${FAKE_LINGER:-no}"
`

func newFakeSystemd(t *testing.T, extra ...string) *fakeSystemd {
	t.Helper()
	bin := t.TempDir()
	for name, text := range map[string]string{"systemctl": fakeSystemctl, "loginctl": fakeLoginctl} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f := &fakeSystemd{log: filepath.Join(t.TempDir(), "calls"), xdg: t.TempDir()}
	f.unit = filepath.Join(f.xdg, "systemd", "user")
	f.env = append([]string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"FAKE_SYSTEMD_LOG=" + f.log, "XDG_CONFIG_HOME=" + f.xdg}, extra...)
	return f
}

// calls returns the recorded calls and forgets them.
func (f *fakeSystemd) calls(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(f.log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	os.Remove(f.log)
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func (f *fakeSystemd) unitText(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(f.unit, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// exeWithSpace copies the test binary to a path with a blank in it, as a
// real install under "/opt/my tools" would be.
func exeWithSpace(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "bin dir", "fleet watch")
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(fwtest.Exe(t))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// unitSettings reads a unit file's Key=value lines (comments skipped).
func unitSettings(text string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "[") {
			m[k] = v
		}
	}
	return m
}

// systemdSplit splits an ExecStart= value into argv as systemd does: words
// split at blanks outside quotes, "…" and '…' quoting, C escapes, `\;` for a
// literal semicolon, then `%%` → `%` and `$$` → `$`. Anything this project
// should never write (a bare `;`, another specifier, a variable) is an error.
func systemdSplit(v string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	rs := []rune(v)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == '\\':
			if i+1 >= len(rs) {
				return nil, fmt.Errorf("trailing backslash")
			}
			i++
			switch rs[i] {
			case '\\', '"', '\'':
				cur.WriteRune(rs[i])
			case 'n':
				cur.WriteRune('\n')
			case 't':
				cur.WriteRune('\t')
			case ';':
				cur.WriteString(`\;`) // kept; a whole-word `\;` is a literal ;
			default:
				return nil, fmt.Errorf("unknown escape \\%c", rs[i])
			}
			inWord = true
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteRune(c)
			}
		case c == '"' || c == '\'':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unbalanced quote")
	}
	if inWord {
		words = append(words, cur.String())
	}
	for i, w := range words {
		switch w {
		case ";":
			return nil, fmt.Errorf("word %d is a command separator", i)
		case `\;`:
			words[i] = ";"
			continue
		}
		var err error
		if words[i], err = unescapeSigns(w, '%'); err == nil {
			words[i], err = unescapeSigns(words[i], '$')
		}
		if err != nil {
			return nil, fmt.Errorf("word %d %q: %v", i, w, err)
		}
	}
	return words, nil
}

// unescapeSigns turns a doubled sign into one and refuses a single one,
// which systemd would expand.
func unescapeSigns(w string, sign byte) (string, error) {
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		if w[i] != sign {
			b.WriteByte(w[i])
			continue
		}
		if i+1 < len(w) && w[i+1] == sign {
			b.WriteByte(sign)
			i++
			continue
		}
		return "", fmt.Errorf("a lone %c would be expanded", sign)
	}
	return b.String(), nil
}

// TestSystemdSplit checks the test's own reading of ExecStart.
func TestSystemdSplit(t *testing.T) {
	got, err := systemdSplit(`/bin/x "a b" 'c "d"' e\\f "100%% $$x" \; ""`)
	want := []string{"/bin/x", "a b", `c "d"`, `e\f`, "100% $x", ";", ""}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("%q %v", got, err)
	}
	for _, bad := range []string{`a ; b`, `a %h`, `a $HOME`, `"a`} {
		if _, err := systemdSplit(bad); err == nil {
			t.Errorf("systemdSplit(%q): want an error", bad)
		}
	}
}

// analyzeVerify runs `systemd-analyze --user verify` on unit files. CI
// installs systemd when it is missing; elsewhere the check is skipped.
func analyzeVerify(t *testing.T, files ...string) {
	t.Helper()
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("systemd-analyze is missing in CI (.ci/run installs the systemd package)")
		}
		t.Skip("systemd-analyze is not installed")
	}
	cmd := exec.Command(sa, append([]string{"--user", "verify"}, files...)...)
	// The user manager it simulates wants a runtime folder of its own.
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+t.TempDir(), "SYSTEMD_LOG_LEVEL=notice")
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestWatchInstallRunsAsSystemdWould installs units for a project whose path
// has blanks, quotes, % and $ and a binary under a path with a blank;
// systemd-analyze accepts them, emit prints the same text, and running
// ExecStart exactly as systemd splits it claims a plan (exit 0) and then
// idles with exit 1, which SuccessExitStatus counts as success.
func TestWatchInstallRunsAsSystemdWould(t *testing.T) {
	t.Parallel()
	dir := newOddTree(t, fwtest.Plan{Rel: "features/first.md"})
	fake := newFakeSystemd(t)
	bin := exeWithSpace(t)
	agent := `odd "one" 5% $x`
	worker := "tier=mid,agent=" + agent + ",interval=1h30m"
	r := fwtest.RunEnv(t, dir, fake.env, "watch", "install", "--bin", bin, "--worker", worker)
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("install: %v", r)
	}
	stem := "fleetwatch-" + strings.ToLower(strings.Trim(strings.NewReplacer(" ", "-", `"`, "-", "'", "-", "%", "-", "$", "-", `\`, "-", "/", "-").Replace(oddName), "-.")) + "-odd--one--5---x"
	svcPath, tmrPath := filepath.Join(fake.unit, stem+".service"), filepath.Join(fake.unit, stem+".timer")
	analyzeVerify(t, svcPath, tmrPath)

	svc, tmr := fake.unitText(t, stem+".service"), fake.unitText(t, stem+".timer")
	ts := unitSettings(tmr)
	if ts["OnUnitActiveSec"] != "1h30min" || ts["Persistent"] != "true" || ts["OnBootSec"] == "" || ts["Unit"] != stem+".service" {
		t.Errorf("timer:\n%s", tmr)
	}
	// emit prints exactly what install wrote.
	e := fwtest.RunEnv(t, dir, fake.env, "watch", "emit", "systemd", "--bin", bin, "--worker", worker)
	if e.Code != 0 || !strings.Contains(e.Stdout, "# "+svcPath+"\n"+svc) || !strings.Contains(e.Stdout, "# "+tmrPath+"\n"+tmr) || !strings.Contains(e.Stdout, "enable-linger") {
		t.Fatalf("emit differs from install:\n%v", e)
	}

	s := unitSettings(svc)
	if s["Type"] != "oneshot" {
		t.Errorf("Type=%s", s["Type"])
	}
	wd, err := unescapeSigns(s["WorkingDirectory"], '%')
	if err != nil || wd != dir {
		t.Fatalf("WorkingDirectory=%s reads as %q (%v), want %q", s["WorkingDirectory"], wd, err, dir)
	}
	argv, err := systemdSplit(s["ExecStart"])
	if err != nil {
		t.Fatalf("ExecStart=%s: %v", s["ExecStart"], err)
	}
	want := []string{bin, "work-once", "--root", dir, "--once", "--agent-id", agent, "--tier", "mid"}
	if !slices.Equal(argv, want) {
		t.Fatalf("ExecStart=%s\nsplits to %q\nwant      %q", s["ExecStart"], argv, want)
	}
	success := strings.Fields(s["SuccessExitStatus"])
	runUnit := func() (int, string) {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = wd
		cmd.Env = append(os.Environ(), fwtest.AsFleetwatch+"=1", "GORACE=atexit_sleep_ms=0")
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(success, fmt.Sprint(code)) && code != 0 {
			t.Logf("exit %d is a failed run (SuccessExitStatus=%s)", code, s["SuccessExitStatus"])
		}
		return code, string(out)
	}
	code, out := runUnit()
	if code != 0 || strings.TrimSpace(out) != filepath.Join(dir, ".plans", "in-progress", "first.md") {
		t.Fatalf("first run: exit %d, %q", code, out)
	}
	var lease struct {
		AgentID string `json:"agent_id"`
	}
	data, err := os.ReadFile(filepath.Join(dir, ".plans", ".leases", "in-progress__first.md.json"))
	if err != nil || json.Unmarshal(data, &lease) != nil || lease.AgentID != agent {
		t.Fatalf("lease %s: %v", data, err)
	}
	// Nothing left: exit 1, which the unit counts as success (idle).
	if code, _ := runUnit(); code != 1 || !slices.Contains(success, "1") || !slices.Contains(success, "0") {
		t.Fatalf("idle run: exit %d, SuccessExitStatus=%q", code, success)
	}
}

// TestWatchInstallUninstall drives install and uninstall against a fake
// systemctl: what is called, what is written, and that a differing unit
// stops the whole install before anything is written.
func TestWatchInstallUninstall(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t)
	fake := newFakeSystemd(t)
	exe := fwtest.Exe(t)
	base := filepath.Base(dir)
	install := func(extra ...string) fwtest.Result {
		return fwtest.RunEnv(t, dir, fake.env, append([]string{"watch", "install", "--bin", exe}, extra...)...)
	}
	r := install("--worker", "tier=mid,agent=mid-1", "--worker", "tier=small,agent=small-1,interval=10m")
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("install: %v", r)
	}
	stem := "fleetwatch-" + strings.ToLower(base)
	wantCalls := []string{"--user is-system-running", "--user daemon-reload",
		"--user enable --now " + stem + "-mid-1.timer", "--user enable --now " + stem + "-small-1.timer",
		"loginctl show-user tester --property=Linger --value"}
	if got := fake.calls(t); !slices.Equal(got, wantCalls) {
		t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantCalls, "\n"))
	}
	for _, want := range []string{"created " + filepath.Join(fake.unit, stem+"-mid-1.service"), "enabled " + stem + "-small-1.timer", "loginctl enable-linger tester"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("install stdout lacks %q:\n%s", want, r.Stdout)
		}
	}
	entries, _ := os.ReadDir(fake.unit)
	if len(entries) != 4 {
		t.Fatalf("unit folder holds %d files, want 4", len(entries))
	}
	before := fake.unitText(t, stem+"-mid-1.timer")

	// The same again changes nothing.
	if r := install("--worker", "tier=mid,agent=mid-1"); r.Code != 0 || !strings.Contains(r.Stdout, "unchanged") {
		t.Fatalf("reinstall: %v", r)
	}
	fake.calls(t)
	// A changed worker plus a new one: refused whole, nothing written.
	r = install("--worker", "tier=new,agent=new-1", "--worker", "tier=mid,agent=mid-1,interval=1m")
	fwtest.OneLineError(t, r, "--worker", "tier=new")
	r = install("--worker", "tier=small,agent=new-1", "--worker", "tier=mid,agent=mid-1,interval=1m")
	fwtest.OneLineError(t, r, stem+"-mid-1.timer", "--yes", "nothing written")
	if _, err := os.Stat(filepath.Join(fake.unit, stem+"-new-1.service")); err == nil {
		t.Error("a refused install wrote the new worker's unit")
	}
	if fake.unitText(t, stem+"-mid-1.timer") != before {
		t.Error("a refused install changed a unit")
	}
	// --dry-run fails where the real run would, naming the unit and --yes.
	r = install("--worker", "tier=small,agent=new-1", "--worker", "tier=mid,agent=mid-1,interval=1m", "--dry-run")
	fwtest.OneLineError(t, r, "would refuse", stem+"-mid-1.timer", "--yes")
	if strings.Contains(r.Stdout, "would run") {
		t.Errorf("a refused dry run promises systemctl calls:\n%s", r.Stdout)
	}
	// With --yes it says what --yes would do, and does none of it.
	r = install("--worker", "tier=small,agent=new-1", "--worker", "tier=mid,agent=mid-1,interval=1m", "--dry-run", "--yes")
	for _, want := range []string{"would create " + filepath.Join(fake.unit, stem+"-new-1.timer"), "would replace " + filepath.Join(fake.unit, stem+"-mid-1.timer"), "unchanged " + filepath.Join(fake.unit, stem+"-mid-1.service"), "would run systemctl --user enable --now " + stem + "-new-1.timer"} {
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Errorf("dry run lacks %q: %v", want, r)
		}
	}
	if got := fake.calls(t); !slices.Equal(got, []string{"--user is-system-running"}) || fake.unitText(t, stem+"-mid-1.timer") != before {
		t.Fatalf("dry run acted: %q", got)
	}
	r = install("--worker", "tier=small,agent=new-1", "--worker", "tier=mid,agent=mid-1,interval=1m", "--yes")
	if r.Code != 0 || !strings.Contains(fake.unitText(t, stem+"-mid-1.timer"), "OnUnitActiveSec=1min\n") || !strings.Contains(r.Stdout, "replaced ") {
		t.Fatalf("--yes: %v", r)
	}
	fake.calls(t)

	// Uninstall one worker, then the rest.
	r = fwtest.RunEnv(t, dir, fake.env, "watch", "uninstall", "--agent", "new-1")
	if r.Code != 0 {
		t.Fatalf("uninstall new-1: %v", r)
	}
	if got := fake.calls(t); !slices.Equal(got, []string{"--user is-system-running", "--user disable --now " + stem + "-new-1.timer", "--user daemon-reload"}) {
		t.Fatalf("uninstall calls: %q", got)
	}
	if entries, _ := os.ReadDir(fake.unit); len(entries) != 4 {
		t.Fatalf("after removing one worker %d files remain, want 4", len(entries))
	}
	// A unit someone else wrote is never touched.
	foreign := filepath.Join(fake.unit, stem+"-hand-made.timer")
	if err := os.WriteFile(foreign, []byte("[Timer]\nOnCalendar=daily\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = fwtest.RunEnv(t, dir, fake.env, "watch", "uninstall", "--dry-run")
	if r.Code != 0 || strings.Count(r.Stdout, "would remove") != 4 || strings.Contains(r.Stdout, "hand-made") {
		t.Fatalf("uninstall --dry-run: %v", r)
	}
	fake.calls(t)
	if r = fwtest.RunEnv(t, dir, fake.env, "watch", "uninstall"); r.Code != 0 {
		t.Fatalf("uninstall: %v", r)
	}
	calls := fake.calls(t)
	for _, want := range []string{"--user disable --now " + stem + "-mid-1.timer", "--user disable --now " + stem + "-small-1.timer", "--user daemon-reload"} {
		if !slices.Contains(calls, want) {
			t.Errorf("uninstall did not call %q: %q", want, calls)
		}
	}
	if entries, _ := os.ReadDir(fake.unit); len(entries) != 1 {
		t.Fatalf("after uninstall %d files remain, want only the hand-made one", len(entries))
	}
	if r = fwtest.RunEnv(t, dir, fake.env, "watch", "uninstall"); r.Code != 1 {
		t.Fatalf("uninstall with nothing installed: %v", r)
	}
	fwtest.OneLineError(t, fwtest.RunEnv(t, dir, fake.env, "watch", "uninstall", "--agent", "ghost"), "--agent", "ghost")
}

// Without a user manager, install still writes the units, enables the
// timers (systemctl only makes links then) and says plainly that nothing
// started; status says it too.
func TestWatchWithoutUserManager(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t)
	fake := newFakeSystemd(t, "FAKE_SYSTEMD_STATE=offline")
	timer := "fleetwatch-" + strings.ToLower(filepath.Base(dir)) + "-mid-1.timer"
	d := fwtest.RunEnv(t, dir, fake.env, "watch", "install", "--bin", fwtest.Exe(t), "--worker", "tier=mid,agent=mid-1", "--dry-run")
	if d.Code != 0 || !strings.Contains(d.Stdout, "would run systemctl --user enable "+timer+"\n") || !strings.Contains(d.Stdout, "would start nothing now") {
		t.Fatalf("dry run: %v", d)
	}
	fake.calls(t)
	r := fwtest.RunEnv(t, dir, fake.env, "watch", "install", "--bin", fwtest.Exe(t), "--worker", "tier=mid,agent=mid-1")
	for _, want := range []string{"not started: systemctl --user cannot reach a user manager (offline)", "enabled " + timer + ": it starts at the next login (or at boot, with linger)", "enable-linger"} {
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Fatalf("install lacks %q: %v", want, r)
		}
	}
	if got := fake.calls(t); slices.Contains(got, "--user daemon-reload") || !slices.Contains(got, "--user enable "+timer) {
		t.Fatalf("with no manager, want enable without --now and nothing else: %q", got)
	}
	r = fwtest.RunEnv(t, dir, fake.env, "watch", "status")
	if r.Code != 0 || !strings.Contains(r.Stdout, "cannot reach a user manager (offline)") || !strings.Contains(r.Stdout, "-mid-1.timer  installed (agent mid-1)") || !strings.Contains(r.Stdout, "mid-1  no runs recorded") {
		t.Fatalf("status: %v", r)
	}
	// When even the links cannot be made, install says what to run later.
	other := fwtest.NewTree(t)
	r = fwtest.RunEnv(t, other, append(fake.env, "FAKE_SYSTEMD_FAIL=enable"), "watch", "install", "--bin", fwtest.Exe(t), "--worker", "tier=mid,agent=mid-1")
	if r.Code != 0 || !strings.Contains(r.Stdout, "not enabled: systemctl --user enable ") || !strings.Contains(r.Stdout, "once it is up: systemctl --user daemon-reload && systemctl --user enable --now ") {
		t.Fatalf("install with a failing enable: %v", r)
	}
}

// A failing systemctl call is reported, not ignored as anchor did; the
// units it wrote stay for the next try.
func TestWatchInstallSystemctlFails(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t)
	fake := newFakeSystemd(t, "FAKE_SYSTEMD_FAIL=enable")
	r := fwtest.RunEnv(t, dir, fake.env, "watch", "install", "--bin", fwtest.Exe(t), "--worker", "tier=mid,agent=mid-1")
	fwtest.OneLineError(t, r, "systemctl --user enable --now", "-mid-1.timer", "Access denied", "units written")
	if entries, _ := os.ReadDir(fake.unit); len(entries) != 2 {
		t.Fatalf("unit folder holds %d files, want 2", len(entries))
	}
}

// TestWatchStatus: anchor's test 113 (OK, the orchestrator) plus what anchor
// left out: review-needed, each tier's next pick, timers with last result
// and next run, linger, each worker's last run.
func TestWatchStatus(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t,
		fwtest.Plan{Rel: "bugs/crash.md", Fields: "Preferred models: small"},
		fwtest.Plan{Rel: "features/deep.md", Fields: "Preferred models: reasoner"},
		fwtest.Plan{Rel: "review-needed/done.md"},
		fwtest.Plan{Rel: "drafts/idea.md"},
	)
	if err := os.Remove(filepath.Join(dir, "ANCHOR-CONVENTIONS.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".anchor"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".anchor", "conventions.md"), []byte("**Preferred orchestrator:** `claude:opus`\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := newFakeSystemd(t)
	if r := fwtest.RunEnv(t, dir, fake.env, "watch", "install", "--bin", fwtest.Exe(t), "--worker", "tier=mid,agent=mid-1", "--worker", "tier=small,agent=small-1"); r.Code != 0 {
		t.Fatalf("install: %v", r)
	}
	state := filepath.Join(dir, "var", "fleet", "workers", "mid-1.json")
	if err := os.MkdirAll(filepath.Dir(state), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state, []byte(`{"pid":4242,"agent_id":"mid-1","tier":"mid","plan":"in-progress/x.md","started":"2026-11-29T10:00:00Z","last_heartbeat":"2026-11-29T10:05:00Z","state":"running","exit_code":null}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := fwtest.RunEnv(t, dir, fake.env, "watch", "status")
	if r.Code != 0 || r.Stderr != "" {
		t.Fatalf("status: %v", r)
	}
	stem := "fleetwatch-" + strings.ToLower(filepath.Base(dir))
	for _, want := range []string{
		"plans         OK ",
		"drafts 1  bugs 1  features 1  in-progress 0  review-needed 1  ambiguous 0  blocked 0  completed 0",
		"next pick     small     bugs/crash.md\n",
		"              mid       nothing: none of 2 ready plans is free, unblocked and fit for mid\n",
		"              reasoner  features/deep.md\n",
		"orchestrator  claude:opus (.anchor/conventions.md)",
		stem + "-mid-1.timer  active, enabled; last run Sun 2026-11-29 10:00:00 UTC, idle (exit 1); next ",
		"linger        off: ",
		"loginctl enable-linger tester",
		"workers       mid-1  running (stale), plan in-progress/x.md, last heartbeat ",
		// No state file yet, but the timer has run: that, not "no runs".
		"small-1  last run Sun 2026-11-29 10:00:00 UTC by its timer, idle (exit 1); no state file yet\n",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, r.Stdout)
		}
	}
	// The monotonic next elapse (3h 5min from boot) became a wall-clock time.
	if !strings.Contains(r.Stdout, "next "+time.Now().Format("Mon 2006-01-02")) && !strings.Contains(r.Stdout, "next "+time.Now().Add(-24*time.Hour).Format("Mon 2006-01-02")) {
		t.Logf("next run is not today or yesterday (boot long ago?):\n%s", r.Stdout)
	}

	// No workers, no timers: said plainly.
	bare := fwtest.NewTree(t)
	r = fwtest.RunEnv(t, bare, newFakeSystemd(t, "FAKE_LINGER=yes").env, "watch", "status", "--project", bare)
	for _, want := range []string{"orchestrator  claude:opus (ANCHOR-CONVENTIONS.md)", "timers        none installed", "linger        on", "no runs recorded", "nothing: no ready plans"} {
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Errorf("bare status lacks %q: %v", want, r)
		}
	}
	// anchor's test 112: no .plans/ is exit 2 and says MISSING.
	empty := t.TempDir()
	r = fwtest.Run(t, empty, "watch", "status", "--project", empty)
	fwtest.OneLineError(t, r, ".plans")
	if !strings.Contains(r.Stdout, "MISSING") {
		t.Errorf("no MISSING in %q", r.Stdout)
	}
}

// TestWatchEmitCron checks a cron line field by field, then runs its command
// through sh as cron would (after cron's own \% unescape): it claims and logs.
func TestWatchEmitCron(t *testing.T) {
	t.Parallel()
	dir := newOddTree(t, fwtest.Plan{Rel: "bugs/b.md"})
	exe := exeWithSpace(t)
	r := fwtest.Run(t, dir, "watch", "emit", "cron", "--bin", exe, "--worker", "tier=small,agent=s1,interval=10m", "--worker", "tier=mid,agent=m 1,interval=30s")
	if r.Code != 0 {
		t.Fatalf("%v", r)
	}
	var lines, notes []string
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		if strings.HasPrefix(l, "#") {
			notes = append(notes, l)
		} else {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 || !strings.Contains(strings.Join(notes, "\n"), "30s runs every 1m") {
		t.Fatalf("want two lines and a note on 30s:\n%s", r.Stdout)
	}
	for i, want := range [][5]string{{"*/10", "*", "*", "*", "*"}, {"*", "*", "*", "*", "*"}} {
		f := strings.SplitN(lines[i], " ", 6)
		if len(f) != 6 || [5]string(f[:5]) != want {
			t.Fatalf("line %d fields %q, want %q", i, f, want)
		}
	}
	// A crontab % ends the command unless escaped; cron drops the backslash.
	cmdText := strings.SplitN(lines[0], " ", 6)[5]
	if strings.Contains(strings.ReplaceAll(cmdText, `\%`, ""), "%") {
		t.Fatalf("unescaped %% in %s", cmdText)
	}
	cmd := exec.Command("/bin/sh", "-c", strings.ReplaceAll(cmdText, `\%`, "%"))
	cmd.Dir = t.TempDir() // cron starts in $HOME; the line must cd itself
	cmd.Env = append(os.Environ(), fwtest.AsFleetwatch+"=1", "GORACE=atexit_sleep_ms=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cron command: %v %s", err, out)
	}
	if !fwtest.Exists(dir, "in-progress/b.md") {
		t.Fatal("the cron command claimed nothing")
	}
	log, err := os.ReadFile(filepath.Join(dir, "var", "fleet", "logs", "s1.log"))
	if err != nil || !strings.Contains(string(log), " fleet claimed in-progress/b.md\n") {
		t.Fatalf("log: %q %v", log, err)
	}
	// anchor's */90: an hourly run in disguise. Here: an error naming the fix.
	fwtest.OneLineError(t, fwtest.Run(t, dir, "watch", "emit", "cron", "--bin", exe, "--worker", "tier=mid,agent=a,interval=90m"), "90m", "1h or 2h")
}

// anchor's test 114: emit for a named project prints the units and the
// linger advice.
func TestWatchEmitSystemdAnchorShape(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t)
	r := fwtest.Run(t, t.TempDir(), "watch", "emit", "systemd", "--project", dir, "--bin", fwtest.Exe(t), "--worker", "tier=mid,agent=x,interval=5m")
	if r.Code != 0 || !strings.Contains(r.Stdout, ".service") || !strings.Contains(r.Stdout, "enable-linger") || !strings.Contains(r.Stdout, "OnUnitActiveSec=5min") {
		t.Fatalf("%v", r)
	}
}

func TestWatchBadInput(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t)
	exe := fwtest.Exe(t)
	// Should a case get as far as writing, it writes to a throw-away folder.
	fake := newFakeSystemd(t)
	for _, c := range []struct {
		args  []string
		names []string
	}{
		{[]string{"watch"}, nil},
		{[]string{"watch", "frob"}, []string{"frob"}},
		{[]string{"watch", "emit", "launchd", "--worker", "tier=mid,agent=a"}, []string{"launchd"}},
		{[]string{"watch", "emit", "systemd"}, []string{"--worker"}},
		{[]string{"watch", "emit", "systemd", "--bin", exe, "--worker", "tier=mid,agent=a", "--worker", "tier=small,agent=a"}, []string{"--worker", `"a"`}},
		{[]string{"watch", "emit", "systemd", "--bin", exe, "--worker", "tier=mid,agent=a,colour=red"}, []string{"--worker", "colour"}},
		{[]string{"watch", "emit", "systemd", "--bin", exe, "--worker", "tier=mid,agent=a,interval=5q"}, []string{"interval", "5q"}},
		{[]string{"watch", "emit", "systemd", "--bin", exe, "--worker", "tier=mid,agent=a,interval=1M"}, []string{"--worker", "1M", "month"}},
		{[]string{"watch", "emit", "systemd", "--bin", exe, "--worker", "tier=mid,agent=a,interval=0.3s"}, []string{"--worker", "whole number of seconds"}},
		{[]string{"watch", "emit", "systemd", "--bin", exe, "--worker", "tier=giant,agent=a"}, []string{"giant"}},
		{[]string{"watch", "emit", "systemd", "--bin", exe, "--worker", "endpoint=h100,agent=a"}, []string{"endpoints.yaml"}},
		{[]string{"watch", "emit", "systemd", "--bin", "/no/such/fleetwatch", "--worker", "tier=mid,agent=a"}, []string{"--bin", "/no/such/fleetwatch"}},
		{[]string{"watch", "emit", "cron", "--bin", exe, "--worker", "tier=mid,agent=a,interval=7m"}, []string{"7m", "6m or 10m"}},
		{[]string{"watch", "install", "--bin", exe, "--worker", "tier=mid,agent=a", "extra"}, []string{"extra"}},
		// The test binary lives in go-build: a unit naming it would break.
		{[]string{"watch", "install", "--worker", "tier=mid,agent=a"}, []string{"temporary build", "--bin"}},
		{[]string{"watch", "status", "--bogus"}, []string{"-bogus"}},
		{[]string{"orchestrator", "--set", ""}, []string{"--set"}},
		{[]string{"orchestrator", "--set", "a`b"}, []string{"--set"}},
		{[]string{"skill", "frob"}, []string{"frob"}},
	} {
		r := fwtest.RunEnv(t, dir, fake.env, c.args...)
		if len(c.args) == 1 {
			if r.Code != 2 || !strings.Contains(r.Stderr, "status") {
				t.Errorf("%q: %v", c.args, r)
			}
			continue
		}
		t.Run(strings.Join(c.args[:2], "_"), func(t *testing.T) { fwtest.OneLineError(t, r, c.names...) })
	}
}

func TestOrchestratorCommand(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t)
	if r := fwtest.Run(t, dir, "orchestrator"); r.Code != 0 || r.Stdout != "claude:opus\n" {
		t.Fatalf("scaffold default: %v", r)
	}
	r := fwtest.Run(t, dir, "orchestrator", "--set", "local:qwen3")
	if r.Code != 0 || !strings.Contains(r.Stdout, "ANCHOR-CONVENTIONS.md") {
		t.Fatalf("set: %v", r)
	}
	if r := fwtest.Run(t, dir, "orchestrator", "--project", dir); r.Stdout != "local:qwen3\n" {
		t.Fatalf("read back: %v", r)
	}
	// No conventions file: exit 1 (nothing set), and --set creates one.
	bare := t.TempDir()
	if r := fwtest.Run(t, bare, "orchestrator", "--project", bare); r.Code != 1 || !strings.Contains(r.Stderr, "ANCHOR-CONVENTIONS.md") {
		t.Fatalf("unset: %v", r)
	}
	if r := fwtest.Run(t, bare, "orchestrator", "--project", bare, "--set", "claude:sonnet"); r.Code != 0 {
		t.Fatalf("set in a bare folder: %v", r)
	}
	data, err := os.ReadFile(filepath.Join(bare, "ANCHOR-CONVENTIONS.md"))
	if err != nil || !strings.Contains(string(data), "**Preferred orchestrator:** `claude:sonnet`") {
		t.Fatalf("%s %v", data, err)
	}
}

func TestSkillInstall(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t)
	r := fwtest.Run(t, t.TempDir(), "skill", "install", "--project", dir)
	if r.Code != 0 {
		t.Fatalf("%v", r)
	}
	cmdFile := filepath.Join(dir, ".claude", "commands", "fleet-watch.md")
	skillFile := filepath.Join(dir, ".agents", "skills", "fleet-watch", "SKILL.md")
	for _, p := range []string{cmdFile, skillFile} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"fleetwatch watch status --project", "fleetwatch watch install", "consent", "--dry-run", "enable-linger", skillText(t)} {
			if !strings.Contains(string(data), want) {
				t.Errorf("%s lacks %q", p, want)
			}
		}
		if strings.Contains(string(data), "python") || strings.Contains(string(data), ".sh") {
			t.Errorf("%s tells the agent to use a script", p)
		}
	}
	if data, _ := os.ReadFile(skillFile); !strings.HasPrefix(string(data), "---\nname: fleet-watch\ndescription: ") {
		t.Errorf("SKILL.md front matter: %.60q", data)
	}
	if data, _ := os.ReadFile(cmdFile); !strings.Contains(string(data), "$ARGUMENTS") {
		t.Errorf("the slash command ignores its argument")
	}
	if r := fwtest.Run(t, dir, "skill", "install"); r.Code != 0 || strings.Count(r.Stdout, "unchanged") != 2 {
		t.Fatalf("again: %v", r)
	}
	// An edited file is not overwritten without --yes, and nothing is written.
	if err := os.WriteFile(cmdFile, []byte("my own notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(skillFile)
	fwtest.OneLineError(t, fwtest.Run(t, dir, "skill", "install"), cmdFile, "--yes", "nothing written")
	// The dry run fails where the real run would.
	r = fwtest.Run(t, dir, "skill", "install", "--dry-run")
	fwtest.OneLineError(t, r, "would refuse", cmdFile, "--yes")
	if !strings.Contains(r.Stdout, "would replace "+cmdFile) {
		t.Errorf("dry run: %v", r)
	}
	if r := fwtest.Run(t, dir, "skill", "install", "--dry-run", "--yes"); r.Code != 0 || !strings.Contains(r.Stdout, "would create "+skillFile) {
		t.Errorf("dry run --yes: %v", r)
	}
	if _, err := os.Stat(skillFile); err == nil {
		t.Fatal("a refused skill install wrote a file")
	}
	if r := fwtest.Run(t, dir, "skill", "install", "--yes"); r.Code != 0 || !strings.Contains(r.Stdout, "replaced "+cmdFile) {
		t.Fatalf("--yes: %v", r)
	}
}

// skillText is the skill body ui/cli embeds.
func skillText(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "ui", "cli", "skills", "fleet-watch.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
