package proc

// The install and uninstall plans: Describe (the dry run) lists exactly the
// files Apply writes or removes and the systemctl calls it makes, with a
// user manager, without one, and without systemctl; and a plan that refuses
// has changed nothing and called nothing.

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
)

// planSystemctl records its calls, one a line, and answers like a user
// manager in $PLAN_STATE (running unless set).
const planSystemctl = `#!/bin/sh
printf '%s\n' "$*" >> "$PLAN_LOG"
if [ "$2" = is-system-running ]; then echo "${PLAN_STATE:-running}"; [ "${PLAN_STATE:-running}" = running ]; exit; fi
exit 0
`

// planEnv puts the fake systemctl first on PATH (or, for "none", leaves
// systemctl off PATH) and returns its call log.
func planEnv(t *testing.T, state string) string {
	t.Helper()
	bin := t.TempDir()
	if state != "none" {
		testkit.WriteScript(t, filepath.Join(bin, "systemctl"), planSystemctl)
	}
	log := filepath.Join(t.TempDir(), "calls")
	t.Setenv("PATH", bin)
	t.Setenv("PLAN_LOG", log)
	t.Setenv("PLAN_STATE", state)
	return log
}

// planCalls returns the recorded calls, without the user manager probe,
// and forgets them.
func planCalls(t *testing.T, log string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	os.Remove(log)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if l != "" && l != "--user is-system-running" {
			out = append(out, l)
		}
	}
	return out
}

func planUnits(t *testing.T, project string, agents ...string) []Unit {
	t.Helper()
	iv, _ := parseInterval("5m")
	var out []Unit
	for _, a := range agents {
		u, err := Units("/usr/local/bin/fleetwatch", project, Spec{Agent: a, Tier: "mid", Interval: iv})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, u...)
	}
	return out
}

// folderFiles maps every file under dir to its content ("-> target" for a
// link).
func folderFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		switch {
		case err != nil || fi.IsDir():
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[p] = "-> " + target
		default:
			data, _ := os.ReadFile(p)
			out[p] = string(data)
		}
		return nil
	})
	return out
}

func TestInstallPlanDescribesWhatApplyDoes(t *testing.T) {
	for _, state := range []string{"running", "offline", "none"} {
		t.Run(state, func(t *testing.T) {
			log := planEnv(t, state)
			dir := filepath.Join(t.TempDir(), "systemd", "user")
			// mid-1 is installed as planned, mid-2 differs, mid-3 is new.
			old := planUnits(t, "/p/app", "mid-1", "mid-2")
			old[3].Text += "# edited\n"
			if err := writeUnits(dir, old); err != nil {
				t.Fatal(err)
			}
			before := folderFiles(t, dir)
			units := planUnits(t, "/p/app", "mid-1", "mid-2", "mid-3")
			p, err := NewInstallPlan(dir, "/p/app", units, true)
			if err != nil {
				t.Fatal(err)
			}
			planCalls(t, log)
			var dry, real strings.Builder
			p.Describe(&dry)
			if err := p.Apply(&real); err != nil {
				t.Fatal(err)
			}
			// What the dry run promised, read back from its lines.
			want := before
			var wantCalls []string
			for _, line := range strings.Split(strings.TrimSpace(dry.String()), "\n") {
				if args, ok := strings.CutPrefix(line, "would run systemctl "); ok {
					wantCalls = append(wantCalls, args)
					continue
				}
				verb, path, _ := strings.Cut(strings.TrimPrefix(line, "would "), " ")
				i := slices.IndexFunc(units, func(u Unit) bool { return filepath.Join(dir, u.Name) == path })
				switch {
				case i < 0 && strings.HasPrefix(line, "would start nothing"):
				case i < 0:
					t.Fatalf("dry run line %q names no unit", line)
				case verb == "create" || verb == "replace":
					want[path] = units[i].Text
				case verb != "unchanged":
					t.Fatalf("dry run line %q", line)
				}
			}
			if got := folderFiles(t, dir); !mapsEqual(got, want) {
				t.Errorf("Apply left %v\nthe dry run promised %v\ndry run:\n%s", got, want, dry.String())
			}
			if got := planCalls(t, log); !slices.Equal(got, wantCalls) {
				t.Errorf("Apply called %q\nthe dry run promised %q\ndry run:\n%s", got, wantCalls, dry.String())
			}
			if n := strings.Count(dry.String(), "would "); n < 3 || !strings.Contains(dry.String(), "unchanged "+filepath.Join(dir, units[0].Name)) {
				t.Errorf("dry run:\n%s", dry.String())
			}
			if state != "running" && !strings.Contains(dry.String(), "would start nothing") {
				t.Errorf("dry run without a manager:\n%s", dry.String())
			}
			t.Logf("dry run:\n%sreal run:\n%s", dry.String(), real.String())
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestUninstallPlanDescribesWhatApplyDoes(t *testing.T) {
	for _, state := range []string{"running", "offline", "none"} {
		t.Run(state, func(t *testing.T) {
			log := planEnv(t, state)
			dir := filepath.Join(t.TempDir(), "systemd", "user")
			units := append(planUnits(t, "/p/app", "mid-1", "mid-2"), planUnits(t, "/q/app", "other")...)
			if err := writeUnits(dir, units); err != nil {
				t.Fatal(err)
			}
			wants := filepath.Join(dir, "timers.target.wants")
			os.MkdirAll(wants, 0o755)
			for _, u := range units {
				if strings.HasSuffix(u.Name, ".timer") {
					os.Symlink(filepath.Join(dir, u.Name), filepath.Join(wants, u.Name))
				}
			}
			installed, err := Installed(dir, "/p/app")
			if err != nil || len(installed) != 4 {
				t.Fatalf("Installed: %v %v", installed, err)
			}
			want := folderFiles(t, dir)
			p, err := NewUninstallPlan(dir, installed)
			if err != nil {
				t.Fatal(err)
			}
			planCalls(t, log)
			var dry, real strings.Builder
			p.Describe(&dry)
			if err := p.Apply(&real); err != nil {
				t.Fatal(err)
			}
			var wantCalls []string
			for _, line := range strings.Split(strings.TrimSpace(dry.String()), "\n") {
				switch rest, _ := strings.CutPrefix(line, "would "); {
				case strings.HasPrefix(rest, "stop and disable "):
					wantCalls = append(wantCalls, "--user disable --now "+strings.TrimPrefix(rest, "stop and disable "))
				case strings.HasPrefix(rest, "disable "):
					timer := strings.TrimPrefix(rest, "disable ")
					if state != "none" {
						wantCalls = append(wantCalls, "--user disable "+timer)
					}
					// Without a manager the link goes too (systemctl would
					// remove it; the fake does not).
					delete(want, filepath.Join(wants, timer))
				case strings.HasPrefix(rest, "remove "):
					delete(want, strings.TrimPrefix(rest, "remove "))
				case strings.HasPrefix(rest, "run systemctl "):
					wantCalls = append(wantCalls, strings.TrimPrefix(rest, "run systemctl "))
				case strings.HasPrefix(rest, "stop nothing: "):
				default:
					t.Fatalf("dry run line %q", line)
				}
			}
			if state == "running" {
				// The fake systemctl leaves the links; the real one removes them.
				for _, s := range p.Disable {
					delete(want, filepath.Join(wants, s.Unit))
					os.Remove(filepath.Join(wants, s.Unit))
				}
			}
			if got := folderFiles(t, dir); !mapsEqual(got, want) || len(got) != 3 {
				t.Errorf("Apply left %v\nthe dry run promised %v\ndry run:\n%s", got, want, dry.String())
			}
			if got := planCalls(t, log); !slices.Equal(got, wantCalls) {
				t.Errorf("Apply called %q\nthe dry run promised %q\ndry run:\n%s", got, wantCalls, dry.String())
			}
			t.Logf("dry run:\n%sreal run:\n%s", dry.String(), real.String())
		})
	}
}

// A plan that refuses is refused before anything is written and before
// the user manager is asked: dry run and real run stop at that one point.
func TestWatchPlansRefuseBeforeActing(t *testing.T) {
	log := planEnv(t, "running")
	root := t.TempDir()
	dir := filepath.Join(root, "systemd", "user")
	if err := writeUnits(dir, planUnits(t, "/p/app", "mid-1")); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	os.Mkdir(filepath.Join(dir, "fleetwatch-app-dir-1.service"), 0o755)
	differs := planUnits(t, "/p/app", "mid-1")
	differs[1].Text += "# edited\n"
	cases := []struct {
		name    string
		dir     string
		project string
		units   []Unit
		yes     bool
		want    string // in the error
		refusal bool
	}{
		{"differs", dir, "/p/app", differs, false, "already exists and differs (--yes replaces it)", true},
		{"another project's", dir, "/q/app", planUnits(t, "/q/app", "mid-1"), true, "belong to project /p/app: uninstall it there", true},
		{"folder under a file", filepath.Join(file, "systemd", "user"), "/p/app", planUnits(t, "/p/app", "mid-1"), false, "cannot read " + filepath.Join(file, "systemd", "user", "fleetwatch-app-mid-1.service") + ": not a directory", false},
		{"folder is a file", file, "/p/app", planUnits(t, "/p/app", "mid-1"), false, "cannot read " + filepath.Join(file, "fleetwatch-app-mid-1.service") + ": not a directory", false},
		{"unit is a folder", dir, "/p/app", planUnits(t, "/p/app", "dir-1"), false, "cannot read " + filepath.Join(dir, "fleetwatch-app-dir-1.service"), false},
	}
	for _, c := range cases {
		before := folderFiles(t, root)
		p, err := NewInstallPlan(c.dir, c.project, c.units, c.yes)
		var r *Refusal
		if p != nil || err == nil || !strings.Contains(err.Error(), c.want) || errors.As(err, &r) != c.refusal {
			t.Errorf("%s: plan %v, error %v (refusal %v), want %q (refusal %v)", c.name, p, err, r != nil, c.want, c.refusal)
		}
		if got := planCalls(t, log); len(got) != 0 || !mapsEqual(folderFiles(t, root), before) {
			t.Errorf("%s: a refused plan acted: calls %q", c.name, got)
		}
	}
	// As anyone but root, a folder without write permission is refused too.
	if os.Geteuid() == 0 {
		t.Log("running as root: skipping the read-only folder cases")
		return
	}
	installed, _ := Installed(dir, "/p/app")
	os.Chmod(dir, 0o555)
	defer os.Chmod(dir, 0o755)
	if _, err := NewInstallPlan(dir, "/p/app", differs, true); err == nil || !strings.Contains(err.Error(), "cannot write in "+dir) {
		t.Errorf("install into a read-only folder: %v", err)
	}
	if _, err := NewUninstallPlan(dir, installed); err == nil || !strings.Contains(err.Error(), "cannot write in "+dir) {
		t.Errorf("uninstall from a read-only folder: %v", err)
	}
	if got := planCalls(t, log); len(got) != 0 {
		t.Errorf("refused plans called %q", got)
	}
}
