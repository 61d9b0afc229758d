package cli

// watch install and watch uninstall build one plan, then describe it
// (--dry-run) or carry it out. These tests run both in process, against a
// temporary XDG_CONFIG_HOME and a systemctl that records its calls: for bad
// input the dry run and the real run refuse with the same error and touch
// nothing, and for good input the dry run lists exactly the files and calls
// the real run makes.

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/planfs"
)

const watchPlanSystemctl = `#!/bin/sh
printf '%s\n' "$*" >> "$WATCHPLAN_LOG"
if [ "$2" = is-system-running ]; then echo "${WATCHPLAN_STATE:-running}"; [ "${WATCHPLAN_STATE:-running}" = running ]; exit; fi
exit 0
`

const watchPlanLoginctl = `#!/bin/sh
printf 'loginctl %s\n' "$*" >> "$WATCHPLAN_LOG"
echo no
`

// watchPlanEnv points the unit folder at a fresh XDG_CONFIG_HOME and puts
// the fake systemctl and loginctl alone on PATH; it returns the config
// folder and the call log.
func watchPlanEnv(t *testing.T, state string) (xdg, log string) {
	t.Helper()
	bin := t.TempDir()
	for name, text := range map[string]string{"systemctl": watchPlanSystemctl, "loginctl": watchPlanLoginctl} {
		testkit.WriteScript(t, filepath.Join(bin, name), text)
	}
	xdg, log = t.TempDir(), filepath.Join(t.TempDir(), "calls")
	t.Setenv("PATH", bin)
	t.Setenv("WATCHPLAN_LOG", log)
	t.Setenv("WATCHPLAN_STATE", state)
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("USER", "tester")
	return xdg, log
}

// watchPlanCalls returns the systemctl calls recorded, without the user
// manager probe and the linger question, and forgets them.
func watchPlanCalls(t *testing.T, log string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	os.Remove(log)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if l != "" && l != "--user is-system-running" && !strings.HasPrefix(l, "loginctl ") {
			out = append(out, l)
		}
	}
	return out
}

// watchPlanProject scaffolds a project folder named name.
func watchPlanProject(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if _, err := planfs.Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

type watchRun struct {
	code           int
	stdout, stderr string
}

// runWatch runs watch install (agents nil) or uninstall with w's flags.
func runWatch(w watchFlags, install bool, agents, pos []string) watchRun {
	var out, errb bytes.Buffer
	var code int
	if install {
		code = w.install(pos, &out, &errb)
	} else {
		code = w.uninstall(agents, pos, &out, &errb)
	}
	return watchRun{code, out.String(), errb.String()}
}

// treeFiles maps each file and link under dir to its content.
func treeFiles(dir string) map[string]string {
	out := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			data, _ := os.ReadFile(p)
			out[p] = fi.Mode().String() + " " + string(data)
		}
		return nil
	})
	return out
}

func sameFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// refusedReason is a refusal's one line with what only the dry run or
// only the real run says taken out.
func refusedReason(stderr string) string {
	r := strings.Replace(stderr, "would refuse: ", "", 1)
	r = strings.Replace(r, "; nothing written\n", "\n", 1)
	return strings.Replace(r, "; nothing removed\n", "\n", 1)
}

func TestWatchDryRunRefusesWhereTheRealRunDoes(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	type setup func(t *testing.T, xdg string, w *watchFlags) (install bool, agents, pos []string)
	worker := func(spec ...string) setup {
		return func(t *testing.T, xdg string, w *watchFlags) (bool, []string, []string) {
			w.workers = spec
			return true, nil, nil
		}
	}
	// installed installs mid-1 (every 5m) first, then asks for spec.
	installed := func(yes bool, spec string) setup {
		return func(t *testing.T, xdg string, w *watchFlags) (bool, []string, []string) {
			first := *w
			first.workers = []string{"tier=mid,agent=mid-1"}
			if r := runWatch(first, true, nil, nil); r.code != 0 {
				t.Fatalf("first install: %+v", r)
			}
			w.workers, w.yes = []string{spec}, yes
			return true, nil, nil
		}
	}
	cases := []struct {
		name  string
		setup setup
		want  string
		code  int
	}{
		{"no worker", worker(), "needs at least one --worker", exitError},
		{"bad tier", worker("tier=new,agent=a"), `--worker "tier=new,agent=a"`, exitError},
		{"unknown key", worker("tier=mid,agent=a,colour=red"), `unknown key "colour"`, exitError},
		{"two workers one id", worker("tier=mid,agent=a", "tier=small,agent=a"), `two workers with agent id "a"`, exitError},
		{"bin not executable", func(t *testing.T, xdg string, w *watchFlags) (bool, []string, []string) {
			w.bin = filepath.Join(xdg, "not-a-binary")
			os.WriteFile(w.bin, []byte("x"), 0o644)
			w.workers = []string{"tier=mid,agent=a"}
			return true, nil, nil
		}, "not an executable file", exitError},
		{"no .plans", func(t *testing.T, xdg string, w *watchFlags) (bool, []string, []string) {
			w.project, w.workers = t.TempDir(), []string{"tier=mid,agent=a"}
			return true, nil, nil
		}, ".plans", exitError},
		{"stray argument", func(t *testing.T, xdg string, w *watchFlags) (bool, []string, []string) {
			w.workers = []string{"tier=mid,agent=a"}
			return true, nil, []string{"extra"}
		}, `unexpected argument "extra"`, exitError},
		{"unit differs", installed(false, "tier=mid,agent=mid-1,interval=10m"), "already exists and differs (--yes replaces it)", exitError},
		{"another project's unit", func(t *testing.T, xdg string, w *watchFlags) (bool, []string, []string) {
			other := *w
			other.project, other.workers = watchPlanProject(t, "app"), []string{"tier=mid,agent=mid-1"}
			if r := runWatch(other, true, nil, nil); r.code != 0 {
				t.Fatalf("install the other project: %+v", r)
			}
			w.workers, w.yes = []string{"tier=mid,agent=mid-1"}, true
			return true, nil, nil
		}, "uninstall it there, or pick another agent id", exitError},
		{"unit folder under a file", func(t *testing.T, xdg string, w *watchFlags) (bool, []string, []string) {
			os.WriteFile(filepath.Join(xdg, "systemd"), []byte("x"), 0o644)
			w.workers = []string{"tier=mid,agent=a"}
			return true, nil, nil
		}, "not a directory", exitError},
		{"unit file a folder", func(t *testing.T, xdg string, w *watchFlags) (bool, []string, []string) {
			os.MkdirAll(filepath.Join(xdg, "systemd", "user", "fleetwatch-app-a.timer"), 0o755)
			w.workers = []string{"tier=mid,agent=a"}
			return true, nil, nil
		}, "cannot read", exitError},
		{"no unit folder", func(t *testing.T, xdg string, w *watchFlags) (bool, []string, []string) {
			t.Setenv("XDG_CONFIG_HOME", "relative")
			t.Setenv("HOME", "")
			w.workers = []string{"tier=mid,agent=a"}
			return true, nil, nil
		}, "no unit folder", exitError},
		{"uninstall unknown agent", func(t *testing.T, xdg string, w *watchFlags) (bool, []string, []string) {
			installed(false, "tier=mid,agent=mid-1")(t, xdg, w)
			return false, []string{"ghost"}, nil
		}, `--agent "ghost"`, exitError},
		{"uninstall nothing installed", func(t *testing.T, xdg string, w *watchFlags) (bool, []string, []string) {
			return false, nil, nil
		}, "no fleetwatch units for", exitNothing},
		{"uninstall stray argument", func(t *testing.T, xdg string, w *watchFlags) (bool, []string, []string) {
			return false, nil, []string{"extra"}
		}, `unexpected argument "extra"`, exitError},
		{"uninstall no unit folder", func(t *testing.T, xdg string, w *watchFlags) (bool, []string, []string) {
			t.Setenv("XDG_CONFIG_HOME", "")
			t.Setenv("HOME", "")
			return false, nil, nil
		}, "no unit folder", exitError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			xdg, log := watchPlanEnv(t, "running")
			w := watchFlags{project: watchPlanProject(t, "app"), bin: exe}
			install, agents, pos := c.setup(t, xdg, &w)
			watchPlanCalls(t, log)
			before := treeFiles(xdg)
			var runs [2]watchRun
			for i, dry := range []bool{true, false} {
				w.dryRun = dry
				runs[i] = runWatch(w, install, agents, pos)
				if calls := watchPlanCalls(t, log); len(calls) != 0 || !sameFiles(treeFiles(xdg), before) {
					t.Errorf("dry run %v: a refused run acted: calls %q", dry, calls)
				}
			}
			dry, real := runs[0], runs[1]
			if dry.code != c.code || real.code != c.code || dry.stdout != "" || real.stdout != "" || !strings.Contains(real.stderr, c.want) || strings.Count(real.stderr, "\n") != 1 {
				t.Errorf("want exit %d, nothing on stdout and one line naming %q:\ndry run %+v\nreal run %+v", c.code, c.want, dry, real)
			}
			if refusedReason(dry.stderr) != refusedReason(real.stderr) {
				t.Errorf("dry run and real run refuse differently:\n%s%s", dry.stderr, real.stderr)
			}
		})
	}
}

// describedAs maps the dry run's lines to the real run's for the same step.
var describedAs = strings.NewReplacer(
	"would create ", "created ", "would replace ", "replaced ", "unchanged ", "unchanged ",
	"would stop and disable ", "stopped and disabled ", "would disable ", "disabled ", "would remove ", "removed ")

func TestWatchDryRunListsWhatTheRealRunDoes(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, state := range []string{"running", "offline"} {
		t.Run(state, func(t *testing.T) {
			xdg, log := watchPlanEnv(t, state)
			w := watchFlags{project: watchPlanProject(t, "app"), bin: exe, workers: []string{"tier=mid,agent=mid-1"}}
			if r := runWatch(w, true, nil, nil); r.code != 0 {
				t.Fatalf("first install: %+v", r)
			}
			// mid-1 changes, mid-2 is new.
			w.workers = []string{"tier=mid,agent=mid-1,interval=1m", "tier=small,agent=mid-2"}
			w.yes = true
			check := func(install bool, agents []string) {
				t.Helper()
				watchPlanCalls(t, log)
				before := treeFiles(xdg)
				w.dryRun = true
				dry := runWatch(w, install, agents, nil)
				if calls := watchPlanCalls(t, log); dry.code != 0 || len(calls) != 0 || !sameFiles(treeFiles(xdg), before) {
					t.Fatalf("dry run acted (calls %q): %+v", calls, dry)
				}
				w.dryRun = false
				real := runWatch(w, install, agents, nil)
				if real.code != 0 {
					t.Fatalf("real run: %+v", real)
				}
				calls := watchPlanCalls(t, log)
				var steps, promised []string
				for _, line := range strings.Split(strings.TrimSpace(dry.stdout), "\n") {
					// Disabling a timer is a systemctl call, with a manager or not.
					if timer, ok := strings.CutPrefix(line, "would stop and disable "); ok {
						promised = append(promised, "--user disable --now "+timer)
					} else if timer, ok := strings.CutPrefix(line, "would disable "); ok {
						promised = append(promised, "--user disable "+timer)
					}
					if args, ok := strings.CutPrefix(line, "would run systemctl "); ok {
						promised = append(promised, args)
					} else if !strings.HasPrefix(line, "would start nothing") && !strings.HasPrefix(line, "would stop nothing") {
						steps = append(steps, describedAs.Replace(line))
					}
				}
				// In the real run, each step's line in order; then the offline
				// enablements, which the dry run lists as systemctl calls.
				var done []string
				for _, line := range strings.Split(strings.TrimSpace(real.stdout), "\n") {
					for _, s := range steps {
						if line == s {
							done = append(done, s)
						}
					}
				}
				if !slices.Equal(done, steps) || !slices.Equal(calls, promised) {
					t.Errorf("the dry run promised\n%s\nthe real run did (calls %q)\n%s", dry.stdout, calls, real.stdout)
				}
			}
			check(true, nil)
			check(false, []string{"mid-2"})
			check(false, nil)
			if files := treeFiles(filepath.Join(xdg, "systemd", "user")); len(files) != 0 {
				t.Errorf("after uninstall the unit folder holds %v", files)
			}
		})
	}
}
