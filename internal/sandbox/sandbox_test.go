package sandbox

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// needLandlock skips without Landlock, except in CI, whose machines have
// it: there a skip would hide a broken sandbox.
func needLandlock(t *testing.T) {
	t.Helper()
	if _, err := ABI(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI runs the sandbox tests, but %v", err)
		}
		t.Skipf("no sandbox here: %v", err)
	}
}

// contained runs script (sh) inside a domain that may write dirs and
// returns its output and error.
func contained(t *testing.T, script string, dirs ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dirs[0]
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	release, err := Policy{Write: dirs, OpenNetwork: true}.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	release()
	return out.String(), err
}

func TestWritesOnlyWhereAllowed(t *testing.T) {
	needLandlock(t)
	mine, theirs := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(theirs, "kept"), []byte("theirs\n"), 0o644)
	t.Setenv("THEIRS", theirs)
	out, err := contained(t, `
		set -e
		mkdir -p sub/deeper && echo a > sub/deeper/f && mv sub/deeper/f g && ln -s g h && rm -r sub
		echo ok > /dev/null
		cat "$THEIRS/kept" >/dev/null
		if echo x 2>/dev/null >"$THEIRS/new"; then echo "wrote theirs"; fi
		if rm "$THEIRS/kept" 2>/dev/null; then echo "removed theirs"; fi
		if mv g "$THEIRS/g" 2>/dev/null; then echo "moved out"; fi
		if kill -0 $PPID 2>/dev/null; then echo "signalled the starter"; fi
		echo done`, mine)
	_ = err
	if strings.TrimSpace(out) != "done" {
		t.Fatalf("inside the domain:\n%s", out)
	}
	if data, err := os.ReadFile(filepath.Join(theirs, "kept")); err != nil || string(data) != "theirs\n" {
		t.Errorf("the other folder changed: %q %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(mine, "g")); err != nil {
		t.Errorf("the allowed folder: %v", err)
	}
}

// The starter stays unconfined: the domain is the throwaway thread's and
// its child's alone.
func TestTheStarterStaysFree(t *testing.T) {
	needLandlock(t)
	for range 20 {
		if _, err := contained(t, "true", t.TempDir()); err != nil {
			t.Fatal(err)
		}
	}
	// Every thread of this process, whichever runs this goroutine now,
	// still writes anywhere.
	done := make(chan error, 8)
	for range 8 {
		go func() { done <- os.WriteFile(filepath.Join(t.TempDir(), "free"), nil, 0o644) }()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatalf("the starter was confined: %v", err)
		}
	}
}

func TestParseModeAndStatus(t *testing.T) {
	for in, want := range map[string]Mode{"": Auto, "auto": Auto, "require": Require, "off": Off} {
		if m, err := ParseMode(in); err != nil || m != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, m, err)
		}
	}
	if _, err := ParseMode("on"); err == nil {
		t.Error("ParseMode(on) should fail")
	}
	if c, line, err := Status(Off); c || err != nil || line != "agents are not contained (sandbox: off)" {
		t.Errorf("Status(off) = %v %q %v", c, line, err)
	}
	_, abiErr := ABI()
	c, line, err := Status(Require)
	switch {
	case abiErr == nil && (!c || err != nil || !strings.HasPrefix(line, "agents are contained (Landlock ABI")):
		t.Errorf("Status(require) with Landlock = %v %q %v", c, line, err)
	case abiErr != nil && (c || err == nil):
		t.Errorf("Status(require) without Landlock = %v %q %v", c, line, err)
	}
}

// A process started in a Group cannot take anything out of it: a daemon
// it starts in a session of its own still ends when the group is closed.
func TestGroupKillsWhatLeftTheProcessGroup(t *testing.T) {
	g, err := NewGroup(GroupName(t.TempDir(), "test"), DefaultLimits())
	if err != nil {
		t.Skipf("no cgroup v2 group here: %v", err)
	}
	pidfile := filepath.Join(t.TempDir(), "daemon.pid")
	cmd := exec.Command("sh", "-c", `setsid sh -c 'echo $$ > "$0"; exec sleep 300' "$1" </dev/null >/dev/null 2>&1 &
		while [ ! -s "$1" ]; do sleep 0.01; done`, "sh", pidfile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	g.Attach(cmd.SysProcAttr)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	data, _ := os.ReadFile(pidfile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		t.Fatalf("the daemon is not running (pid %q)", data)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	// It is gone, or a zombie nobody here reaps.
	if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && !strings.Contains(string(stat), ") Z ") {
		t.Errorf("the daemon outlived its group: %s", stat)
	}
	if _, err := os.Stat(g.Path); !os.IsNotExist(err) {
		t.Errorf("the group %s is still there: %v", g.Path, err)
	}
}

// A spawned process leads a session of its own, holds no capability, not
// even in its bounding set, and cannot gain one: with a Landlock domain or
// without.
func TestSpawnStartsAloneWithNothing(t *testing.T) {
	for _, policy := range []*Policy{nil, {Write: []string{t.TempDir()}, OpenNetwork: true}} {
		if policy != nil {
			needLandlock(t)
		}
		cmd := exec.Command("sh", "-c", `grep -E '^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status; echo "sid $(cut -d' ' -f6 /proc/self/stat) pid $$"`)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		release, err := Spawn{Policy: policy}.Start(cmd)
		if err != nil {
			t.Fatal(err)
		}
		err = cmd.Wait()
		release()
		if err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			k, v, _ := strings.Cut(line, ":")
			v = strings.TrimSpace(v)
			switch {
			case strings.HasPrefix(k, "Cap") && strings.Trim(v, "0") != "":
				t.Errorf("contained=%v: %s is %s", policy != nil, k, v)
			case k == "NoNewPrivs" && v != "1":
				t.Errorf("contained=%v: no_new_privs is %s", policy != nil, v)
			case strings.HasPrefix(line, "sid "):
				f := strings.Fields(line)
				if f[1] != f[3] {
					t.Errorf("contained=%v: not a session leader: %s", policy != nil, line)
				}
			}
		}
	}
}

// A frozen group's processes do not run, whatever signals they get, until
// it is thawed.
func TestGroupFreezesWhatItHolds(t *testing.T) {
	g, err := NewGroup(GroupName(t.TempDir(), "freeze"), Limits{Procs: 64})
	if err != nil {
		t.Skipf("no cgroup here: %v", err)
	}
	defer g.Close()
	if !strings.Contains(g.Held(), "freeze") {
		t.Skipf("no freezer here: %s", g.Held())
	}
	counter := filepath.Join(t.TempDir(), "n")
	cmd := exec.Command("sh", "-c", `i=0; while :; do i=$((i+1)); echo $i > "$0"; sleep 0.01; done`, counter)
	release, err := Spawn{Group: g}.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		g.Close()
		cmd.Wait()
		release()
	}()
	read := func() string { b, _ := os.ReadFile(counter); return string(b) }
	for deadline := time.Now().Add(5 * time.Second); read() == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
	}
	if err := g.Freeze(); err != nil {
		t.Fatal(err)
	}
	before := read()
	syscall.Kill(cmd.Process.Pid, syscall.SIGCONT)
	time.Sleep(200 * time.Millisecond)
	if after := read(); after != before {
		t.Errorf("counted on while frozen: %q then %q", before, after)
	}
	if err := g.Thaw(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if read() == before {
		t.Error("still stopped after the thaw")
	}
}
