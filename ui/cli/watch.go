package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/registry"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

const watchUsage = `Workers are --worker agent=ID,tier=T[,interval=5m][,model=M][,endpoint=E,registry=F][,run=1].
`

func watchCmd() *cobra.Command {
	return group("watch", "status, emit, install or uninstall reboot-persistent workers (systemd user timers or cron)", watchUsage, false,
		watchStatusCmd(), watchEmitCmd(), watchInstallCmd(), watchUninstallCmd())
}

// watchFlags are the flags the watch subcommands share.
type watchFlags struct {
	project string
	workers []string
	bin     string
	yes     bool
	dryRun  bool
}

func (w *watchFlags) registerProject(fs *pflag.FlagSet) {
	projectFlags(fs, &w.project, rootHelp)
}

func (w *watchFlags) registerWorkers(fs *pflag.FlagSet) {
	// One worker per flag: the commas belong to its value.
	fs.StringArrayVar(&w.workers, "worker", nil, "a worker: agent=ID,tier=T[,interval=5m,model=M,endpoint=E,registry=F,run=1] (repeat for more)")
	fs.StringVar(&w.bin, "bin", "", "the fleetwatch binary the units run (default: this one)")
}

// projectDir is the absolute project root.
func (w *watchFlags) projectDir() (string, error) {
	return filepath.Abs(findRoot(w.project))
}

// parsed is what emit and install work from: the project, the binary the
// units run, and the workers, checked.
type parsed struct {
	project string
	bin     string
	specs   []proc.Spec
}

// parse settles the project, binary and workers. Everything a unit would
// trip over at run time (an unknown tier or endpoint, a missing .plans/, a
// path a unit file or crontab line cannot hold) is refused now, with the
// flag named. unitFiles says the paths go into systemd units, which hold
// fewer than a crontab line.
func (w *watchFlags) parse(name string, unitFiles bool, stderr io.Writer) (parsed, error) {
	var p parsed
	project, err := w.projectDir()
	if err != nil {
		return p, err
	}
	t, err := planfs.Open(project)
	if err != nil {
		return p, err
	}
	p.project = t.Project
	checkPath := proc.PlainText
	if unitFiles {
		checkPath = proc.UnitPath
	}
	if err := checkPath(p.project); err != nil {
		return p, fmt.Errorf("--project: %v", err)
	}
	if len(w.workers) == 0 {
		return p, fmt.Errorf("%s: needs at least one --worker agent=ID,tier=T", name)
	}
	cwd, _ := os.Getwd()
	for _, raw := range w.workers {
		sp, err := proc.ParseSpec(raw, cwd)
		if err == nil {
			err = checkEndpoint(p.project, sp)
		}
		if err != nil {
			return p, fmt.Errorf("--worker %q: %v", raw, err)
		}
		p.specs = append(p.specs, sp)
	}
	if err := proc.CheckUnique(p.specs); err != nil {
		return p, fmt.Errorf("--worker: %v", err)
	}
	p.bin, err = w.binary(name == "watch install", stderr)
	if err == nil {
		if perr := checkPath(p.bin); perr != nil {
			err = fmt.Errorf("--bin: %v", perr)
		}
	}
	return p, err
}

// checkEndpoint loads the registry a worker names, as work-once will on
// every run, so a typo fails here and not in every timer run.
func checkEndpoint(project string, sp proc.Spec) error {
	if sp.Endpoint == "" {
		return nil
	}
	regPath := sp.Registry
	if regPath == "" {
		regPath = registry.Path(project)
	}
	reg, err := registry.Load(regPath)
	if err != nil {
		return err
	}
	ep, err := reg.Lookup(sp.Endpoint)
	if err != nil {
		return err
	}
	if sp.Tier == "" {
		if _, err := model.ParseTier(ep.Tier); err != nil {
			return fmt.Errorf("%s:%d: endpoint %s: %v", reg.Path, ep.TierLine, ep.Name, err)
		}
	}
	return nil
}

// binary is the absolute path units run: --bin, else this executable. A
// `go run` build is deleted when it exits, so units pointing at it would
// fail every run: install refuses it, emit warns.
func (w *watchFlags) binary(strict bool, stderr io.Writer) (string, error) {
	if w.bin != "" {
		abs, err := filepath.Abs(w.bin)
		if err != nil {
			return "", fmt.Errorf("--bin %s: %v", w.bin, err)
		}
		fi, err := os.Stat(abs)
		if err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			return "", fmt.Errorf("--bin %s: not an executable file", w.bin)
		}
		return abs, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find this binary's path (%v): pass --bin", err)
	}
	if temporaryBuild(exe) && strict {
		return "", fmt.Errorf("%s is a temporary build (go run) that is deleted on exit: build one with go build and pass --bin", exe)
	}
	if temporaryBuild(exe) {
		fmt.Fprintf(stderr, "fleetwatch: warning: %s is a temporary build (go run) that is deleted on exit; build one with go build and pass --bin\n", exe)
	}
	return exe, nil
}

func temporaryBuild(exe string) bool {
	return strings.Contains(exe, string(filepath.Separator)+"go-build")
}

func watchEmitCmd() *cobra.Command {
	return leaf("emit systemd|cron", "print systemd units (emit systemd) or crontab lines (emit cron)", func(fs *pflag.FlagSet) body {
		var w watchFlags
		w.registerProject(fs)
		w.registerWorkers(fs)
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) != 1 || (pos[0] != "systemd" && pos[0] != "cron") {
				return fail(stderr, exitError, "watch emit: want systemd or cron, got %q", strings.Join(pos, " "))
			}
			p, err := w.parse("watch emit", pos[0] == "systemd", stderr)
			if err != nil {
				return fail(stderr, exitError, "%v", err)
			}
			if pos[0] == "cron" {
				return emitCron(p, stdout, stderr)
			}
			units, err := p.units()
			if err != nil {
				return fail(stderr, exitError, "%v", err)
			}
			dir, err := proc.UserUnitDir()
			if err != nil {
				dir = "~/.config/systemd/user"
			}
			for _, u := range units {
				fmt.Fprintf(stdout, "# %s\n%s\n", filepath.Join(dir, u.Name), u.Text)
			}
			fmt.Fprintf(stdout, "# To install: fleetwatch watch install with the same flags, or copy the files above, then\n")
			fmt.Fprintf(stdout, "#   systemctl --user daemon-reload\n#   systemctl --user enable --now %s\n", strings.Join(timers(units), " "))
			fmt.Fprintf(stdout, "# and, so the timers run without a login and after a reboot:\n#   loginctl enable-linger %s\n", userName())
			return exitOK
		}
	})
}

func (p parsed) units() ([]proc.Unit, error) {
	var out []proc.Unit
	for _, sp := range p.specs {
		u, err := proc.Units(p.bin, p.project, sp)
		if err != nil {
			return nil, fmt.Errorf("--worker agent=%s: %v", sp.Agent, err)
		}
		out = append(out, u...)
	}
	return out, nil
}

func emitCron(p parsed, stdout, stderr io.Writer) int {
	var lines []string
	for _, sp := range p.specs {
		line, note, err := proc.CronLine(p.bin, p.project, sp)
		if err != nil {
			return fail(stderr, exitError, "--worker agent=%s: %v", sp.Agent, err)
		}
		if note != "" {
			lines = append(lines, "# "+note)
		}
		lines = append(lines, line)
	}
	fmt.Fprintf(stdout, "# fleetwatch workers for %s: add these with crontab -e\n", p.project)
	fmt.Fprintf(stdout, "# output goes to %s/ in the project\n# m h dom mon dow  command\n", proc.CronLogDir)
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	return exitOK
}

func timers(units []proc.Unit) []string {
	var out []string
	for _, u := range units {
		if strings.HasSuffix(u.Name, ".timer") {
			out = append(out, u.Name)
		}
	}
	return out
}

func userName() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "$USER"
}

func watchInstallCmd() *cobra.Command {
	return leaf("install", "write systemd user units and enable their timers", func(fs *pflag.FlagSet) body {
		var w watchFlags
		w.registerProject(fs)
		w.registerWorkers(fs)
		fs.BoolVar(&w.yes, "yes", false, "replace units that differ from what fleetwatch would write")
		fs.BoolVar(&w.dryRun, "dry-run", false, "show what would change, change nothing")
		return func(pos []string, stdout, stderr io.Writer) int { return w.install(pos, stdout, stderr) }
	})
}

// install builds the install plan, then describes it (--dry-run) or
// carries it out: both refuse at the same point, since every check runs
// while the plan is built.
func (w *watchFlags) install(pos []string, stdout, stderr io.Writer) int {
	if len(pos) > 0 {
		return fail(stderr, exitError, "watch install: unexpected argument %q", pos[0])
	}
	plan, err := w.installPlan(stderr)
	if err != nil {
		return w.planFailed(stderr, "watch install", "nothing written", err)
	}
	if w.dryRun {
		// The dry run is what the skill shows before asking for consent.
		plan.Describe(stdout)
		return exitOK
	}
	if err := plan.Apply(stdout); err != nil {
		return fail(stderr, exitError, "watch install: %v", err)
	}
	printLingerAdvice(stdout)
	return exitOK
}

// installPlan checks the flags, renders the units and plans writing them.
// It refuses before anything is written: anchor wrote the units before the
// first conflict and left a half-installed set behind.
func (w *watchFlags) installPlan(stderr io.Writer) (*proc.InstallPlan, error) {
	p, err := w.parse("watch install", true, stderr)
	if err != nil {
		return nil, err
	}
	units, err := p.units()
	if err != nil {
		return nil, err
	}
	dir, err := proc.UserUnitDir()
	if err != nil {
		return nil, fmt.Errorf("watch install: %v", err)
	}
	plan, err := proc.NewInstallPlan(dir, p.project, units, w.yes)
	if err != nil && !errors.As(err, new(*proc.Refusal)) {
		return nil, fmt.Errorf("watch install: %v", err)
	}
	return plan, err
}

// planFailed reports a plan that could not be built. A refusal reads
// "would refuse: ..." in a dry run and "...; nothing written" (or removed)
// in the real run; any other error reads the same in both.
func (w *watchFlags) planFailed(stderr io.Writer, cmd, nothing string, err error) int {
	var r *proc.Refusal
	switch {
	case !errors.As(err, &r):
		return fail(stderr, exitError, "%v", err)
	case w.dryRun:
		return fail(stderr, exitError, "%s: would refuse: %s", cmd, r.Reason)
	}
	return fail(stderr, exitError, "%s: %s; %s", cmd, r.Reason, nothing)
}

func printLingerAdvice(stdout io.Writer) {
	u := userName()
	if v, _ := proc.Linger(u); v == "yes" {
		fmt.Fprintf(stdout, "linger is on for %s: the timers run without a login and after a reboot\n", u)
		return
	}
	fmt.Fprintf(stdout, "so the timers run without a login and start after a reboot: loginctl enable-linger %s\n", u)
}

func watchUninstallCmd() *cobra.Command {
	return leaf("uninstall", "stop, disable and remove this project's units", func(fs *pflag.FlagSet) body {
		var w watchFlags
		var agents []string
		w.registerProject(fs)
		fs.StringArrayVar(&agents, "agent", nil, "remove only this worker's units (repeat for more; default: all of the project's)")
		fs.BoolVar(&w.dryRun, "dry-run", false, "show what would change, change nothing")
		return func(pos []string, stdout, stderr io.Writer) int { return w.uninstall(agents, pos, stdout, stderr) }
	})
}

// uninstall stops, disables and removes the units of agents (all of the
// project's when none): it builds the plan, then describes it (--dry-run)
// or carries it out.
func (w *watchFlags) uninstall(agents, pos []string, stdout, stderr io.Writer) int {
	if len(pos) > 0 {
		return fail(stderr, exitError, "watch uninstall: unexpected argument %q", pos[0])
	}
	// No .plans/ needed: a project deleted first should still be uninstallable.
	project, err := w.projectDir()
	if err != nil {
		return fail(stderr, exitError, "watch uninstall: %v", err)
	}
	dir, err := proc.UserUnitDir()
	if err != nil {
		return fail(stderr, exitError, "watch uninstall: %v", err)
	}
	units, err := selectUnits(dir, project, agents)
	if err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	if len(units) == 0 {
		say(stderr, "watch uninstall: no fleetwatch units for %s in %s", project, dir)
		return exitNothing
	}
	plan, err := proc.NewUninstallPlan(dir, units)
	if err != nil {
		return w.planFailed(stderr, "watch uninstall", "nothing removed", err)
	}
	if w.dryRun {
		plan.Describe(stdout)
		return exitOK
	}
	if err := plan.Apply(stdout); err != nil {
		return fail(stderr, exitError, "watch uninstall: %v", err)
	}
	return exitOK
}

// selectUnits is the project's units in dir, only those of agents when
// any are named.
func selectUnits(dir, project string, agents []string) ([]proc.InstalledUnit, error) {
	all, err := proc.Installed(dir, project)
	if err != nil {
		return nil, fmt.Errorf("watch uninstall: %v", err)
	}
	units := all
	if len(agents) > 0 {
		units = nil
		for _, a := range agents {
			n := len(units)
			for _, u := range all {
				if u.Agent == a {
					units = append(units, u)
				}
			}
			if len(units) == n {
				return nil, fmt.Errorf("--agent %q: no fleetwatch units for it in %s", a, dir)
			}
		}
	}
	return units, nil
}

func watchStatusCmd() *cobra.Command {
	return leaf("status", "lanes, next picks, the orchestrator, timers, linger and each worker's last run", func(fs *pflag.FlagSet) body {
		var w watchFlags
		w.registerProject(fs)
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) > 0 {
				return fail(stderr, exitError, "watch status: unexpected argument %q", pos[0])
			}
			project, err := w.projectDir()
			if err != nil {
				return fail(stderr, exitError, "watch status: %v", err)
			}
			if err := printStatus(project, statusRow(stdout)); err != nil {
				return fail(stderr, exitError, "%v", err)
			}
			return exitOK
		}
	})
}

// statusRow prints one status row: its label, then its words. Plan names,
// agent ids and notes come from files: made safe here, once for every row.
func statusRow(stdout io.Writer) rowFunc {
	return func(label, format string, args ...any) {
		fmt.Fprintf(stdout, "%-13s %s\n", label, termtext.Line(fmt.Sprintf(format, args...)))
	}
}

// printStatus prints watch status's rows for project; an error is a tree
// it cannot read, after the rows up to it.
func printStatus(project string, row rowFunc) error {
	row("project", "%s", project)
	t, err := planfs.Open(project)
	if err != nil {
		row("plans", "MISSING: no %s/ (fleetwatch scaffold %s creates one)", planfs.Dir, project)
		return err
	}
	snap, err := t.Scan()
	if err != nil {
		return fmt.Errorf("cannot read %s: %v", t.Plans, err)
	}
	snap, found := t.Preview(snap)
	row("plans", "OK %s", t.Plans)
	for _, n := range found.Will {
		row("repair", "%s: %s", n.File, n.Message)
	}
	statusLanes(snap, row)
	statusNext(t, snap, row)
	statusOrchestrator(project, row)
	agents, runs := statusTimers(project, row)
	statusLinger(row)
	statusWorkers(project, agents, runs, row)
	statusFleet(project, row)
	return nil
}

// statusOrchestrator says the project's preferred orchestrator and the file
// that names it.
func statusOrchestrator(project string, row rowFunc) {
	if v, file, err := planfs.Orchestrator(project); err != nil {
		row("orchestrator", "unreadable: %v", err)
	} else if v == "" {
		row("orchestrator", "not set (fleetwatch orchestrator --set claude:opus)")
	} else {
		rel, _ := filepath.Rel(project, file)
		row("orchestrator", "%s (%s)", v, rel)
	}
}

// statusLinger says whether this user's timers run without a login.
func statusLinger(row rowFunc) {
	u := userName()
	switch v, why := proc.Linger(u); v {
	case "yes":
		row("linger", "on: %s's timers run without a login and after a reboot", u)
	case "no":
		row("linger", "off: timers stop at logout and wait for a login after a reboot (loginctl enable-linger %s)", u)
	default:
		row("linger", "unknown: %s", why)
	}
}

type rowFunc func(label, format string, args ...any)

// statusLanes counts plans in every lane, review-needed included (anchor's
// status left it out).
func statusLanes(snap *model.Snapshot, row rowFunc) {
	counts := map[model.Lane]int{}
	for _, p := range snap.Plans {
		counts[p.Lane]++
	}
	parts := make([]string, len(model.Lanes))
	for i, l := range model.Lanes {
		parts[i] = fmt.Sprintf("%s %d", l, counts[l])
	}
	row("lanes", "%s", strings.Join(parts, "  "))
}

// statusNext shows what a bare pick by each tier would take now.
func statusNext(t *planfs.Tree, snap *model.Snapshot, row rowFunc) {
	ready := 0
	for _, p := range snap.Plans {
		if p.Lane.Ready() {
			ready++
		}
	}
	opt := model.Options{Now: t.NowSeconds(), History: t.History()}
	label := "next pick"
	for _, tier := range model.Tiers {
		next := "nothing: no ready plans"
		switch {
		case ready == 1:
			next = fmt.Sprintf("nothing: the one ready plan is taken, waiting or not fit for %s", tier)
		case ready > 1:
			next = fmt.Sprintf("nothing: none of %d ready plans is free, unblocked and fit for %s", ready, tier)
		}
		if picks := model.Picks(model.Decide(snap, model.Worker{Tier: tier}, opt), nil); len(picks) > 0 {
			next = picks[0].Plan.Rel
			if n := len(picks); n > 1 {
				next += fmt.Sprintf(" (+%d more)", n-1)
			}
		}
		row(label, "%-9s %s", tier, next)
		label = ""
	}
}

// statusTimers lists the project's installed timers with what the user
// manager says about them, and returns their agent ids and, by agent id,
// the timers the manager answered for.
func statusTimers(project string, row rowFunc) ([]string, map[string]proc.TimerState) {
	dir, err := proc.UserUnitDir()
	if err != nil {
		row("timers", "unknown: %v", err)
		return nil, nil
	}
	units, err := proc.Installed(dir, project)
	if err != nil {
		row("timers", "unknown: %v", err)
		return nil, nil
	}
	var agents []string
	var timerUnits []proc.InstalledUnit
	for _, u := range units {
		if strings.HasSuffix(u.Name, ".timer") {
			timerUnits = append(timerUnits, u)
			agents = append(agents, u.Agent)
		}
	}
	if len(timerUnits) == 0 {
		row("timers", "none installed in %s (fleetwatch watch install --worker agent=ID,tier=T)", dir)
		return nil, nil
	}
	runs := map[string]proc.TimerState{}
	sc := proc.UserSystemctl()
	label := "timers"
	if sc.Down != "" {
		row(label, "%s; only the unit files in %s can be read", sc.Down, dir)
		label = ""
	}
	for _, u := range timerUnits {
		if sc.Down != "" {
			row(label, "%s  installed (agent %s)", u.Name, u.Agent)
			label = ""
			continue
		}
		st, err := sc.TimerStatus(u.Name)
		if err != nil {
			row(label, "%s  %v", u.Name, err)
			label = ""
			continue
		}
		runs[u.Agent] = st
		last := "never run"
		if st.LastRun != "" {
			last = "last run " + lastRun(st)
		}
		next := "nothing scheduled"
		if st.Next != "" {
			next = "next " + st.Next
		}
		row(label, "%s  %s, %s; %s; %s", u.Name, st.Active, st.Enabled, last, next)
		label = ""
	}
	return agents, runs
}

// lastRun is when a timer last fired and how its service ended.
func lastRun(st proc.TimerState) string {
	if st.Result == "" {
		return st.LastRun
	}
	return st.LastRun + ", " + runResult(st.Result, st.Status)
}

// runResult reads a worker run's exit status as work-once's exit codes.
func runResult(result, status string) string {
	switch status {
	case "0":
		return "claimed (exit 0)"
	case "1":
		return "idle (exit 1)"
	case "":
		return result
	}
	return fmt.Sprintf("failed (%s, exit %s)", result, status)
}

// stateParts are what a worker's state file says of its last run, or
// "no run details".
func stateParts(st look.State) []string {
	parts := []string{}
	switch h := st.Health(time.Now()); {
	case h == look.Stale || h == look.Dead:
		parts = append(parts, fmt.Sprintf("%s (%s)", st.State, h))
	case st.State != "":
		parts = append(parts, st.State)
	}
	if st.ExitCode != nil {
		parts = append(parts, fmt.Sprintf("exit %d", *st.ExitCode))
	}
	if st.Plan != "" {
		parts = append(parts, "plan "+st.Plan)
	}
	parts = append(parts, stampParts(st)...)
	if st.Note != "" {
		parts = append(parts, termtext.Line(st.Note))
	}
	if len(parts) == 0 {
		parts = append(parts, "no run details")
	}
	return parts
}

// stampParts are a state file's last heartbeat and start, when known.
func stampParts(st look.State) []string {
	var parts []string
	if !st.LastHeartbeat.IsZero() {
		parts = append(parts, "last heartbeat "+st.LastHeartbeat.Local().Format(time.DateTime))
	}
	if !st.Started.IsZero() {
		parts = append(parts, "started "+st.Started.Local().Format(time.DateTime))
	}
	return parts
}

// statusWorkers shows each worker's last run from its state file. An
// installed worker without one (a unit written before its first run, or by
// a fleetwatch that kept none) shows its timer's last run, when the manager
// knows one: "no runs recorded" would deny a run systemd saw.
func statusWorkers(project string, installed []string, runs map[string]proc.TimerState, row rowFunc) {
	states, problems := look.ReadStates(project)
	label := "workers"
	seen := map[string]bool{}
	for _, st := range states {
		seen[st.AgentID] = true
		parts := stateParts(st)
		row(label, "%s  %s", st.AgentID, strings.Join(parts, ", "))
		label = ""
	}
	for _, p := range problems {
		row(label, "unreadable state file %s", p)
		label = ""
	}
	for _, a := range installed {
		if seen[a] {
			continue
		}
		if st := runs[a]; st.LastRun != "" {
			st.LastRun += " by its timer"
			row(label, "%s  last run %s; no state file yet", a, lastRun(st))
		} else {
			row(label, "%s  no runs recorded", a)
		}
		label = ""
	}
	if label != "" {
		row(label, "no runs recorded (%s/ has no state files)", look.StateDir)
	}
}
