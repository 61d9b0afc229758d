package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/internal/atomicfile"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// UserUnitDir is where the user's systemd manager reads units:
// $XDG_CONFIG_HOME/systemd/user, else ~/.config/systemd/user. A relative
// XDG_CONFIG_HOME is ignored, as the XDG spec says.
func UserUnitDir() (string, error) {
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "systemd", "user"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no unit folder: %v (set XDG_CONFIG_HOME or HOME)", err)
	}
	return filepath.Join(home, ".config", "systemd", "user"), nil
}

// Change is what installing or removing one unit file does.
type Change struct {
	Path string
	Kind ChangeKind
	// Owner is the project a fleetwatch unit being replaced was written
	// for ("" when fleetwatch did not write it): two projects with one
	// folder name share unit names, and one must not take the other's.
	Owner string
}

// ChangeKind says how a unit file changes.
type ChangeKind string

const (
	Create  ChangeKind = "create"
	Replace ChangeKind = "replace"
	Same    ChangeKind = "unchanged"
	Delete  ChangeKind = "remove" // not Remove: that is the worktree verb
)

// planInstall compares units with the files in dir, changing nothing.
func planInstall(dir string, units []Unit) ([]Change, error) {
	out := make([]Change, len(units))
	for i, u := range units {
		p := filepath.Join(dir, u.Name)
		out[i] = Change{Path: p, Kind: Create}
		old, err := os.ReadFile(p)
		switch {
		case err == nil && string(old) == u.Text:
			out[i].Kind = Same
		case err == nil:
			out[i].Kind = Replace
			if proj, _, ok := unitOwner(string(old)); ok {
				out[i].Owner = proj
			}
		case !errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("cannot read %s: %v", p, tree.ErrText(err))
		}
	}
	return out, nil
}

// writeUnits writes each unit into dir through a temporary file and a
// rename, so systemd never reads half a unit.
func writeUnits(dir string, units []Unit) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create %s: %v", dir, tree.ErrText(err))
	}
	for _, u := range units {
		p := filepath.Join(dir, u.Name)
		if err := atomicfile.Write(p, []byte(u.Text), 0o644); err != nil {
			return fmt.Errorf("cannot write %s: %v", p, tree.ErrText(err))
		}
	}
	return nil
}

// InstalledUnit is a fleetwatch unit file found in the unit folder.
type InstalledUnit struct {
	Name    string // e.g. fleetwatch-app-mid-1.timer
	Path    string
	Project string
	Agent   string
}

// Installed lists the fleetwatch units in dir written for project, timers
// and services, by name. A unit of the same name written for another
// project (two projects called app) is not this project's and is left out.
func Installed(dir, project string) ([]InstalledUnit, error) {
	names, err := filepath.Glob(filepath.Join(dir, "fleetwatch-*"))
	if err != nil {
		return nil, err
	}
	var out []InstalledUnit
	for _, p := range names {
		if !strings.HasSuffix(p, ".timer") && !strings.HasSuffix(p, ".service") {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		proj, agent, ok := unitOwner(string(data))
		if !ok || proj != project {
			continue
		}
		out = append(out, InstalledUnit{Name: filepath.Base(p), Path: p, Project: proj, Agent: agent})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// systemctlTimeout bounds one systemctl call; a hung bus must not hang a
// status or an install.
const systemctlTimeout = 30 * time.Second

// Systemctl is the user's systemd manager, reached through the systemctl
// program found on PATH (so tests and odd systems can put their own first).
type Systemctl struct {
	path string
	// Down says why the user manager cannot be used; "" when it can.
	Down string
}

// UserSystemctl finds systemctl and asks whether the user manager is up.
func UserSystemctl() *Systemctl {
	p, err := exec.LookPath("systemctl")
	if err != nil {
		return &Systemctl{Down: "systemctl is not installed here"}
	}
	s := &Systemctl{path: p}
	out, err := s.output("is-system-running")
	switch strings.TrimSpace(out) {
	case "running", "degraded", "starting", "initializing", "maintenance":
		return s
	}
	why := strings.TrimSpace(out)
	if why == "" && err != nil {
		why = err.Error()
	}
	if why == "" {
		why = "no answer"
	}
	s.Down = "systemctl --user cannot reach a user manager (" + why + ")"
	return s
}

// output runs systemctl --user args and returns its stdout; an error
// carries the first line systemctl wrote to stderr.
func (s *Systemctl) output(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), systemctlTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.path, append([]string{"--user"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(errb.String()), "\n")
		if msg == "" {
			msg = err.Error()
		}
		return out.String(), errors.New(msg)
	}
	return out.String(), nil
}

// Run runs `systemctl --user args`.
func (s *Systemctl) Run(args ...string) error {
	if s.Down != "" {
		return errors.New(s.Down)
	}
	if _, err := s.output(args...); err != nil {
		return fmt.Errorf("systemctl --user %s: %v", strings.Join(args, " "), err)
	}
	return nil
}

// CanLink reports whether systemctl is here to enable or disable units,
// which it does without a user manager.
func (s *Systemctl) CanLink() bool { return s.path != "" }

// Link runs `systemctl --user enable|disable unit` without --now, even
// when Down is set: it only edits the unit folder's symlinks, so a timer
// enabled in a container or an SSH session without a manager starts with
// the manager (at the next login, or at boot with linger).
func (s *Systemctl) Link(verb, unit string) error {
	if s.path == "" {
		return errors.New(s.Down)
	}
	if _, err := s.output(verb, unit); err != nil {
		return fmt.Errorf("systemctl --user %s %s: %v", verb, unit, err)
	}
	return nil
}

// unlink removes the timers.target.wants link that enabling timer made in
// dir (fleetwatch timers say WantedBy=timers.target), for when systemctl
// cannot: without it, the link outlives the unit it points at.
func unlink(dir, timer string) error {
	p := filepath.Join(dir, "timers.target.wants", timer)
	fi, err := os.Lstat(p)
	if errors.Is(err, os.ErrNotExist) || err == nil && fi.Mode()&os.ModeSymlink == 0 {
		return nil
	}
	if err == nil {
		err = os.Remove(p)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cannot remove %s: %v", p, tree.ErrText(err))
	}
	return nil
}

// Show returns the named properties of unit.
func (s *Systemctl) Show(unit string, props ...string) (map[string]string, error) {
	if s.Down != "" {
		return nil, errors.New(s.Down)
	}
	out, err := s.output("show", unit, "--property="+strings.Join(props, ","))
	if err != nil {
		return nil, fmt.Errorf("systemctl --user show %s: %v", unit, err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m, nil
}

// TimerState is what the user manager says about one watcher.
type TimerState struct {
	Active  string // timer: active, inactive, failed
	Enabled string // timer: enabled, disabled, ...
	// LastRun is when the timer last fired ("" never); Result and Status
	// are the service's last result (success, exit-code) and exit status.
	LastRun, Result, Status string
	Next                    string // "" when nothing is scheduled
}

// TimerStatus asks the user manager about timer and the service it runs.
func (s *Systemctl) TimerStatus(timer string) (TimerState, error) {
	t, err := s.Show(timer, "ActiveState", "UnitFileState", "LastTriggerUSec", "NextElapseUSecRealtime", "NextElapseUSecMonotonic")
	if err != nil {
		return TimerState{}, err
	}
	st := TimerState{Active: t["ActiveState"], Enabled: t["UnitFileState"], LastRun: stamp(t["LastTriggerUSec"]), Next: stamp(t["NextElapseUSecRealtime"])}
	if st.Next == "" {
		st.Next = monotonicToWall(t["NextElapseUSecMonotonic"])
	}
	svc, err := s.Show(strings.TrimSuffix(timer, ".timer")+".service", "Result", "ExecMainStatus", "ExecMainExitTimestamp")
	if err != nil {
		return st, err
	}
	if stamp(svc["ExecMainExitTimestamp"]) != "" {
		st.Result, st.Status = svc["Result"], svc["ExecMainStatus"]
	}
	return st, nil
}

// stamp turns systemctl's "n/a", "0" and empty into "".
func stamp(v string) string {
	v = strings.TrimSpace(v)
	if v == "n/a" || v == "0" || v == "infinity" {
		return ""
	}
	return v
}

// monotonicToWall turns a monotonic elapse time, which systemctl prints as
// a span since boot (`2h 5min 3.250s`), into a wall-clock time.
func monotonicToWall(v string) string {
	if stamp(v) == "" {
		return ""
	}
	at, err := parseTimespan(v)
	if err != nil {
		return ""
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return ""
	}
	now := time.Duration(ts.Nano())
	return time.Now().Add(at - now).Round(time.Second).Format("Mon 2006-01-02 15:04:05 MST")
}

// timespanUnits are the units systemd prints spans in; a month and a year
// are its averages (30.44 and 365.25 days), which a host up for more than
// a month shows in NextElapseUSecMonotonic.
var timespanUnits = map[string]time.Duration{
	"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "min": time.Minute,
	"h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour,
	"month": 2629800 * time.Second, "y": 31557600 * time.Second,
}

func parseTimespan(v string) (time.Duration, error) {
	var total time.Duration
	for _, f := range strings.Fields(v) {
		i := strings.IndexFunc(f, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		if i <= 0 {
			return 0, fmt.Errorf("bad span %q", v)
		}
		n, err := strconv.ParseFloat(f[:i], 64)
		unit, ok := timespanUnits[f[i:]]
		if err != nil || !ok {
			return 0, fmt.Errorf("bad span %q", v)
		}
		total += time.Duration(n * float64(unit))
	}
	return total, nil
}

// Linger reports whether user's manager outlives their sessions and starts
// at boot, which timers need to survive a reboot: "yes", "no", or "unknown"
// with the reason. It asks loginctl (on PATH), else reads logind's flag file.
func Linger(user string) (string, string) {
	if p, err := exec.LookPath("loginctl"); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), systemctlTimeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, p, "show-user", user, "--property=Linger", "--value").Output()
		if v := strings.TrimSpace(string(out)); err == nil && (v == "yes" || v == "no") {
			return v, ""
		}
	}
	if _, err := os.Stat(filepath.Join("/var/lib/systemd/linger", user)); err == nil {
		return "yes", ""
	}
	if _, err := os.Stat("/var/lib/systemd/linger"); err == nil {
		return "no", ""
	}
	return "unknown", "no loginctl answer and no /var/lib/systemd/linger"
}
