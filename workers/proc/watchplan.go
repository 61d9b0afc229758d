package proc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/internal/atomicfile"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// A plan is what `watch install` or `watch uninstall` does, computed once
// from its inputs: every check that can refuse has run by the time the plan
// exists, and Describe (the dry run) and Apply (the real run) walk the same
// steps. So a dry run fails exactly where the real run would, and says what
// the real run does, by construction rather than by two copies kept alike.

// Op is what one step of a plan does.
type Op string

const (
	// OpWrite writes a unit file (Path, Text); a Same one is left alone.
	OpWrite Op = "write"
	// OpSystemctl runs `systemctl --user Args` through the user manager.
	OpSystemctl Op = "systemctl"
	// OpLink runs `systemctl --user Args` (enable or disable, no --now),
	// which only edits the unit folder's links and needs no manager.
	OpLink Op = "link"
	// OpUnlink disables a timer without a manager: `systemctl --user Args`
	// when systemctl is here (its failure ignored), then the
	// timers.target.wants link at Path is removed.
	OpUnlink Op = "unlink"
	// OpRemove removes a unit file (Path).
	OpRemove Op = "remove"
)

// Step is one thing a plan does.
type Step struct {
	Op    Op
	Path  string     // the file written, removed or unlinked
	Text  string     // OpWrite: the unit's text
	Kind  ChangeKind // OpWrite: Create, Replace or Same
	Unit  string     // the unit file's name, or the timer a call names ("" for daemon-reload)
	Agent string     // uninstall: the worker the unit belongs to
	Args  []string   // OpSystemctl, OpLink, OpUnlink: systemctl's arguments after --user
}

// Refusal is a check a plan failed: the run would change nothing. A dry run
// reports it as "would refuse", the real run as having written nothing.
type Refusal struct{ Reason string }

func (r *Refusal) Error() string { return r.Reason }

// InstallPlan writes a project's units, then enables their timers.
type InstallPlan struct {
	Dir    string
	Writes []Step // one OpWrite per unit, in the order given
	// Calls follow the writes: daemon-reload and enable --now each timer
	// (OpSystemctl) with a user manager; without one, enable each timer
	// (OpLink) where systemctl is here, else nothing.
	Calls []Step
	// Down says why no user manager starts the timers now ("" when one does).
	Down   string
	Timers []string
	sc     *Systemctl
}

// NewInstallPlan plans writing units into dir for project. It refuses, with
// a *Refusal, units that differ from the files there (unless yes), units of
// another project (even with yes) and a dir no file can be written in; it
// asks for the user manager only once nothing refuses.
func NewInstallPlan(dir, project string, units []Unit, yes bool) (*InstallPlan, error) {
	changes, err := planInstall(dir, units)
	if err != nil {
		return nil, err
	}
	if r := installRefusal(changes, project, yes); r != "" {
		return nil, &Refusal{r}
	}
	p := &InstallPlan{Dir: dir}
	writes := false
	for i, c := range changes {
		p.Writes = append(p.Writes, Step{Op: OpWrite, Path: c.Path, Text: units[i].Text, Kind: c.Kind, Unit: units[i].Name})
		writes = writes || c.Kind != Same
		if strings.HasSuffix(units[i].Name, ".timer") {
			p.Timers = append(p.Timers, units[i].Name)
		}
	}
	if writes {
		if err := writableDir(dir); err != nil {
			return nil, &Refusal{err.Error()}
		}
	}
	p.sc = UserSystemctl()
	p.Down = p.sc.Down
	switch {
	case p.Down == "":
		p.Calls = append(p.Calls, Step{Op: OpSystemctl, Args: []string{"daemon-reload"}})
		for _, t := range p.Timers {
			p.Calls = append(p.Calls, Step{Op: OpSystemctl, Unit: t, Args: []string{"enable", "--now", t}})
		}
	case p.sc.CanLink():
		for _, t := range p.Timers {
			p.Calls = append(p.Calls, Step{Op: OpLink, Unit: t, Args: []string{"enable", t}})
		}
	}
	return p, nil
}

// installRefusal says why install must write nothing, or "". A unit of
// another project with the same folder name is never replaced, not even
// with yes: that would take its worker over and hide it from that
// project's status and uninstall. This project's differing units (or a
// same-named file fleetwatch did not write) need yes.
func installRefusal(changes []Change, project string, yes bool) string {
	var owners []string
	foreign := map[string][]string{}
	var differ []string
	for _, c := range changes {
		switch {
		case c.Kind != Replace:
		case c.Owner != "" && c.Owner != project:
			if foreign[c.Owner] == nil {
				owners = append(owners, c.Owner)
			}
			foreign[c.Owner] = append(foreign[c.Owner], c.Path)
		default:
			differ = append(differ, c.Path)
		}
	}
	if len(owners) > 0 {
		parts := make([]string, len(owners))
		for i, o := range owners {
			verb := " belongs to project "
			if len(foreign[o]) > 1 {
				verb = " belong to project "
			}
			parts[i] = strings.Join(foreign[o], ", ") + verb + o
		}
		return strings.Join(parts, "; ") + ": uninstall it there, or pick another agent id"
	}
	if len(differ) > 0 && !yes {
		return strings.Join(differ, ", ") + " already exists and differs (--yes replaces it)"
	}
	return ""
}

// Describe prints the dry run: each step, and what starts when.
func (p *InstallPlan) Describe(w io.Writer) {
	for _, s := range p.Writes {
		if s.Kind == Same {
			fmt.Fprintf(w, "unchanged %s\n", s.Path)
		} else {
			fmt.Fprintf(w, "would %s %s\n", s.Kind, s.Path)
		}
	}
	for _, s := range p.Calls {
		fmt.Fprintf(w, "would run systemctl --user %s\n", strings.Join(s.Args, " "))
	}
	switch {
	case p.Down == "":
	case len(p.Calls) > 0:
		fmt.Fprintf(w, "would start nothing now: %s; the timers would start at the next login (or at boot, with linger)\n", p.Down)
	default:
		fmt.Fprintf(w, "would start nothing: %s\n", p.Down)
	}
}

// installed is what Apply reports for each unit file.
var installed = map[ChangeKind]string{Create: "created", Replace: "replaced", Same: "unchanged"}

// Apply writes the units, each through a temporary file and a rename so
// systemd never reads half a unit, then enables the timers.
func (p *InstallPlan) Apply(w io.Writer) error {
	for _, s := range p.Writes {
		if s.Kind != Same {
			if err := os.MkdirAll(p.Dir, 0o755); err != nil {
				return fmt.Errorf("cannot create %s: %v", p.Dir, tree.ErrText(err))
			}
			if err := atomicfile.Write(s.Path, []byte(s.Text), 0o644); err != nil {
				return fmt.Errorf("cannot write %s: %v", s.Path, tree.ErrText(err))
			}
		}
		fmt.Fprintf(w, "%s %s\n", installed[s.Kind], s.Path)
	}
	if p.Down != "" {
		p.enableOffline(w)
		return nil
	}
	for _, s := range p.Calls {
		if err := p.sc.Run(s.Args...); err != nil {
			return fmt.Errorf("units written, but %v", err)
		}
		if s.Unit != "" {
			fmt.Fprintf(w, "enabled %s\n", s.Unit)
		}
	}
	return nil
}

// enableOffline enables timers with no user manager to start them:
// systemctl only makes the timers.target.wants links then, and the timers
// start with the manager, at the next login or, with linger, at boot.
func (p *InstallPlan) enableOffline(w io.Writer) {
	fmt.Fprintf(w, "not started: %s\n", p.Down)
	for i, s := range p.Calls {
		if err := p.sc.Link(s.Args[0], s.Unit); err != nil {
			fmt.Fprintf(w, "not enabled: %v\n", err)
			break
		}
		fmt.Fprintf(w, "enabled %s: it starts at the next login (or at boot, with linger)\n", s.Unit)
		if i == len(p.Calls)-1 {
			return
		}
	}
	fmt.Fprintf(w, "once it is up: systemctl --user daemon-reload && systemctl --user enable --now %s\n", strings.Join(p.Timers, " "))
}

// UninstallPlan disables a project's timers, then removes its unit files.
type UninstallPlan struct {
	Dir string
	// Disable has a step per timer: disable --now (OpSystemctl) with a user
	// manager, else OpUnlink.
	Disable []Step
	Remove  []Step // one OpRemove per unit file
	// Reload says daemon-reload follows the removals (with a manager).
	Reload bool
	Down   string // why no user manager can stop the timers ("" when one can)
	sc     *Systemctl
}

// NewUninstallPlan plans removing units (found in dir by Installed). It
// refuses, with a *Refusal, a dir (or a timers.target.wants folder holding
// one of the timers' links) files cannot be removed from: the real run
// would stop the timers, then fail to remove their files.
func NewUninstallPlan(dir string, units []InstalledUnit) (*UninstallPlan, error) {
	if err := writableDir(dir); err != nil {
		return nil, &Refusal{err.Error()}
	}
	p := &UninstallPlan{Dir: dir}
	var timers []InstalledUnit
	for _, u := range units {
		if !strings.HasSuffix(u.Name, ".timer") {
			continue
		}
		timers = append(timers, u)
		link := filepath.Join(dir, "timers.target.wants", u.Name)
		if fi, err := os.Lstat(link); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			if err := writableDir(filepath.Dir(link)); err != nil {
				return nil, &Refusal{err.Error()}
			}
		}
	}
	p.sc = UserSystemctl()
	p.Down = p.sc.Down
	p.Reload = p.Down == "" && len(units) > 0
	for _, t := range timers {
		s := Step{Op: OpSystemctl, Unit: t.Name, Agent: t.Agent, Args: []string{"disable", "--now", t.Name}}
		if p.Down != "" {
			s = Step{Op: OpUnlink, Unit: t.Name, Agent: t.Agent, Path: filepath.Join(dir, "timers.target.wants", t.Name)}
			if p.sc.CanLink() {
				s.Args = []string{"disable", t.Name}
			}
		}
		p.Disable = append(p.Disable, s)
	}
	for _, u := range units {
		p.Remove = append(p.Remove, Step{Op: OpRemove, Path: u.Path, Unit: u.Name, Agent: u.Agent})
	}
	return p, nil
}

// Describe prints the dry run.
func (p *UninstallPlan) Describe(w io.Writer) {
	for _, s := range p.Disable {
		if s.Op == OpSystemctl {
			fmt.Fprintf(w, "would stop and disable %s\n", s.Unit)
		} else {
			fmt.Fprintf(w, "would disable %s\n", s.Unit)
		}
	}
	if p.Down != "" {
		fmt.Fprintf(w, "would stop nothing: %s\n", p.Down)
	}
	for _, s := range p.Remove {
		fmt.Fprintf(w, "would remove %s\n", s.Path)
	}
	if p.Reload {
		fmt.Fprintln(w, "would run systemctl --user daemon-reload")
	}
}

// Apply disables the timers and removes the units. A worker whose timer
// could not be disabled keeps its files: its timer may still be enabled
// and running, and with the files gone status would not show it and a
// rerun would not find it.
func (p *UninstallPlan) Apply(w io.Writer) error {
	kept, keptTimers, disableErr := p.disable(w)
	removed := 0
	for _, s := range p.Remove {
		if kept[s.Agent] {
			fmt.Fprintf(w, "kept %s\n", s.Path)
			continue
		}
		if err := os.Remove(s.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("cannot remove %s: %v", s.Path, tree.ErrText(err))
		}
		fmt.Fprintf(w, "removed %s\n", s.Path)
		removed++
	}
	var reloadErr error
	if p.Reload && removed > 0 {
		reloadErr = p.sc.Run("daemon-reload")
	}
	if disableErr != nil {
		return fmt.Errorf("%v; kept the units of %s so a rerun retries", disableErr, strings.Join(keptTimers, ", "))
	}
	if reloadErr != nil {
		return fmt.Errorf("units removed, but %v", reloadErr)
	}
	return nil
}

// disable runs the Disable steps and returns the agents whose timers are
// still enabled, those timers, and the first error.
func (p *UninstallPlan) disable(w io.Writer) (map[string]bool, []string, error) {
	kept := map[string]bool{}
	var keptTimers []string
	var first error
	if p.Down != "" {
		fmt.Fprintf(w, "not stopped: %s\n", p.Down)
	}
	for _, s := range p.Disable {
		var err error
		done := "stopped and disabled"
		if s.Op == OpSystemctl {
			// A run in progress finishes on its own; its claim is safe.
			err = p.sc.Run(s.Args...)
		} else {
			// systemctl disables without a manager (it removes the
			// timers.target.wants link); where it cannot (no systemctl, no
			// bus), the link is removed here, so none outlives its unit.
			if s.Args != nil {
				p.sc.Link(s.Args[0], s.Args[1])
			}
			err = unlink(p.Dir, s.Unit)
			done = "disabled"
		}
		if err != nil {
			kept[s.Agent] = true
			keptTimers = append(keptTimers, s.Unit)
			if first == nil {
				first = err
			}
			continue
		}
		fmt.Fprintf(w, "%s %s\n", done, s.Unit)
	}
	return kept, keptTimers, first
}

// writableDir refuses a folder files cannot be made in or removed from, or
// (when missing) cannot be made: the real run would trip over it half-way.
func writableDir(dir string) error {
	for p := dir; ; {
		fi, err := os.Stat(p)
		switch {
		case err == nil && !fi.IsDir():
			return fmt.Errorf("cannot create %s: %s is not a directory", dir, p)
		case err == nil:
			if err := unix.Access(p, unix.W_OK|unix.X_OK); err != nil {
				if p == dir {
					return fmt.Errorf("cannot write in %s: %v", dir, err)
				}
				return fmt.Errorf("cannot create %s: %v", dir, err)
			}
			return nil
		case !errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("cannot create %s: %v", dir, tree.ErrText(err))
		}
		parent := filepath.Dir(p)
		if parent == p {
			return nil
		}
		p = parent
	}
}
