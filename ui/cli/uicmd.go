package cli

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"syscall"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui"
	"github.com/fleetwatch/fleetwatch/ui/demo"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// defaultOperator is who the UI acts as: operator-$USER.
func defaultOperator() string {
	if u := os.Getenv("USER"); u != "" {
		return "operator-" + u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "operator-" + u.Username
	}
	return "operator"
}

type uiFlags struct {
	root  string
	roots []string // the UI's --root, repeated for several projects
	// projects opens the projects of the user's projects.yaml.
	projects bool
	agent    string
	ttl      float64
	noBell   bool
	claims   string
	demo     bool // the demo's sample project (ui.Options.Demo)
}

// claimsFlagHelp is --claims's help on the faces (board, the UI, serve),
// with the backends as they describe themselves.
var claimsFlagHelp = "where claims are kept: " + claimsChoices() + " (default: fleetwatch.yaml's claims:, else local)"

func (f *uiFlags) register(fs *pflag.FlagSet) {
	agentFlag(fs, &f.agent, defaultOperator(), "who the operator acts as in leases and the event log")
	fs.Float64Var(&f.ttl, "lease-ttl", planfs.DefaultTTL, "lease time to live when recovering a plan, seconds")
	fs.BoolVar(&f.noBell, "no-bell", false, "do not ring the terminal bell when something needs you (N still lists it)")
}

// uiCmd is the top level, which opens the cockpit: `fleetwatch [--root DIR]`.
func uiCmd() *cobra.Command {
	var f uiFlags
	cmd := leaf("fleetwatch [--root DIR]... [--projects]", "open the operator's UI on a project", func(fs *pflag.FlagSet) body {
		f.register(fs)
		// Not the demo's: its claims are its own lease files.
		fs.StringVar(&f.claims, "claims", "", claimsFlagHelp)
		fs.StringArrayVar(&f.roots, "root", nil, rootHelp+"; repeat it to open several projects in one cockpit")
		fs.BoolVar(&f.projects, "projects", false, "open every project listed in projects.yaml ($XDG_CONFIG_HOME/fleetwatch/, else ~/.config/fleetwatch/)")
		return func(pos []string, stdout, stderr io.Writer) int { return f.openProject(stdout, stderr) }
	})
	cmd.Long = "The UI with no command; a command's usage and examples: 'fleetwatch help COMMAND'.\n" + topicsLine()
	cmd.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return unknownCommand(c.Root(), args[0])
		}
		return nil
	}
	return cmd
}

func (f *uiFlags) openProject(stdout, stderr io.Writer) int {
	if err := planfs.ValidTTL(f.ttl); err != nil {
		return fail(stderr, exitError, "--lease-ttl: %v", err)
	}
	several, err := f.severalProjects()
	if err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	if several != nil {
		return f.openProjects(several, stdout, stderr)
	}
	if len(f.roots) == 1 {
		f.root = f.roots[0]
	}
	t, err := planfs.Open(findRoot(f.root))
	if err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	// The cockpit acts (and spawns workers that get its --claims), so it
	// is held to a worker's rule.
	if _, _, _, err := actingClaims(t.Project, f.claims, stderr); err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	if !haveTerminal() {
		return fail(stderr, exitError, "the UI needs a terminal; 'fleetwatch board --once' prints the same board as text")
	}
	remote, err := openRemote(t.Project, f.claims)
	if err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	if remote != nil {
		defer remote.Backend.Close()
	}
	code := openUI(t, f, remote, stderr)
	if code == exitOK {
		tellStillRunning(stdout, t.Project)
	}
	return code
}

// tellStillRunning says, after the UI closed, how many workers keep
// running: they outlive the UI by design, and nothing else would say so.
func tellStillRunning(stdout io.Writer, project string) {
	live, stale := look.Running(project, time.Now())
	n := live + stale
	if n == 0 {
		return
	}
	what := "1 worker keeps"
	if n > 1 {
		what = fmt.Sprintf("%d workers keep", n)
	}
	if stale > 0 {
		what += fmt.Sprintf(" (%d stale)", stale)
	}
	fmt.Fprintf(stdout, "%s running (they outlive the UI); fleetwatch shows them again\n", what)
}

// haveTerminal reports whether the UI can run: stdin and stdout are a terminal.
func haveTerminal() bool {
	return term.IsTerminal(int(os.Stdout.Fd())) && term.IsTerminal(int(os.Stdin.Fd()))
}

// openRemote opens the remote claims backend a face reads (--claims, else
// fleetwatch.yaml), named for its header; nil for the lease files.
func openRemote(project, flag string) (*claims.Opened, error) {
	name, s, err := claimsBackend(project, flag)
	if err != nil || name == claims.LocalName {
		return nil, err
	}
	return claims.OpenNamed(claimsConfig(project, s, name))
}

func openUI(t *planfs.Tree, f *uiFlags, remote *claims.Opened, stderr io.Writer) int {
	if !haveTerminal() {
		return fail(stderr, exitError, "the UI needs a terminal; 'fleetwatch board --once' prints the same board as text")
	}
	r := lipgloss.NewRenderer(os.Stdout)
	// Spawned workers run this very binary, as cron and systemd do.
	self, _ := os.Executable()
	n, stuck, err := cockpitNotifier(t.Project, f.demo, remote)
	if err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	defer n.Close(closeWait)
	err = ui.Run(ui.Options{Tree: t, Agent: f.agent, TTL: f.ttl, MarkdownStyle: markdownStyle(r), Renderer: r, Self: self, NoBell: f.noBell, Claims: remote,
		Uncontained: uncontained(t.Project), Demo: f.demo, Notify: n.Offer, StuckAfter: stuck})
	if err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	return exitOK
}

// openProjects opens the cockpit over several projects: a project that
// cannot be opened (a missing root) is a problem row, not an error.
func (f *uiFlags) openProjects(list []config.Project, stdout, stderr io.Writer) int {
	if !haveTerminal() {
		return fail(stderr, exitError, "the UI needs a terminal; 'fleetwatch board --once --root DIR' prints one project's board as text")
	}
	r := lipgloss.NewRenderer(os.Stdout)
	self, _ := os.Executable()
	base := ui.Options{Agent: f.agent, TTL: f.ttl, MarkdownStyle: markdownStyle(r), Renderer: r, Self: self, NoBell: f.noBell}
	ps := make([]ui.Project, 0, len(list))
	for _, c := range list {
		p := ui.Project{Name: c.Name, Root: c.Root, Options: base}
		t, remote, problem := f.openOne(c.Root, stderr)
		if remote != nil {
			defer remote.Backend.Close()
		}
		if p.Problem = problem; t != nil {
			p.Options.Tree, p.Options.Claims, p.Options.Uncontained = t, remote, uncontained(t.Project)
			// Each project sends its own notices, by its own notify: settings.
			n, stuck, err := cockpitNotifier(t.Project, false, remote)
			if err != nil {
				return fail(stderr, exitError, "%v", err)
			}
			defer n.Close(closeWait)
			p.Options.Notify, p.Options.StuckAfter = n.Offer, stuck
		}
		ps = append(ps, p)
	}
	if err := ui.RunProjects(ps); err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	for _, p := range ps {
		if p.Options.Tree != nil {
			tellStillRunning(prefixed{stdout, termtext.Line(p.Name) + ": "}, p.Options.Tree.Project)
		}
	}
	return exitOK
}

// prefixed writes each write after a prefix: the project a line is about,
// when several closed.
type prefixed struct {
	w      io.Writer
	prefix string
}

func (p prefixed) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, p.prefix); err != nil {
		return 0, err
	}
	return p.w.Write(b)
}

// openOne opens one project of several and its claims; problem says why
// it could not.
func (f *uiFlags) openOne(root string, stderr io.Writer) (t *planfs.Tree, remote *claims.Opened, problem string) {
	if p := projectProblem(root); p != "" {
		return nil, nil, p
	}
	t, err := planfs.Open(root)
	if err == nil {
		_, _, _, err = actingClaims(t.Project, f.claims, stderr)
	}
	if err == nil {
		remote, err = openRemote(t.Project, f.claims)
	}
	if err != nil {
		return nil, nil, err.Error()
	}
	return t, remote, ""
}

// markdownStyle settles the preview's look before the program starts: no
// colour under NO_COLOR, else matching the terminal's background.
func markdownStyle(r *lipgloss.Renderer) string {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return "notty"
	}
	if r.HasDarkBackground() {
		return "dark"
	}
	return "light"
}

// demoCmd builds a throw-away sample project and opens the UI on it.
func demoCmd() *cobra.Command {
	return leaf("demo", "open the UI on a throw-away sample project", func(fs *pflag.FlagSet) body {
		var f uiFlags
		f.register(fs)
		keep := fs.Bool("keep", false, "keep the sample project after the UI closes")
		rootFlag(fs, &f.root, "build the sample project in this folder, and keep it (default: a new temporary folder)")
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) > 0 {
				return fail(stderr, exitError, "demo: unexpected argument %q", pos[0])
			}
			*keep = *keep || f.root != ""
			tty := haveTerminal()
			if !tty && !*keep {
				// Building a project only to delete it helps no one.
				return fail(stderr, exitError, "demo: the UI needs a terminal; 'fleetwatch demo --keep' builds the project anyway")
			}
			dir, project, err := buildDemo(f.root)
			if err != nil {
				return fail(stderr, exitError, "demo: %v", err)
			}
			if *keep {
				fmt.Fprintf(stdout, "demo project: %s (kept)\n", project)
			} else {
				defer removeDemo(dir, project)()
				fmt.Fprintf(stdout, "demo project: %s (removed when the UI closes; --keep keeps it)\n", project)
			}
			if !tty {
				fmt.Fprintf(stdout, "no terminal here: open it with fleetwatch --root %s\n", project)
				return exitOK
			}
			return openDemo(project, &f, *keep, stdout, stderr)
		}
	})
}

// buildDemo writes the sample project into root, or a new temporary
// folder, with this binary as its stand-in agent. On failure it removes the
// folder it made, never one the operator named.
func buildDemo(root string) (dir, project string, err error) {
	if dir, err = demoDir(root); err != nil {
		return "", "", err
	}
	var agent []string
	if self, err := os.Executable(); err == nil {
		agent = []string{self, "demo-agent"}
	}
	if project, err = demo.Create(filepath.Join(dir, "jotter"), time.Now(), agent); err != nil {
		if root == "" {
			os.RemoveAll(dir)
		}
		return "", "", err
	}
	return dir, project, nil
}

// removeDemo arranges for the demo's folder to go, with the workers spawned
// in it, when the returned func runs or the terminal closes.
func removeDemo(dir, project string) (done func()) {
	// A closed terminal (SIGHUP) ends the program without running
	// defers: remove the project then too.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		if _, ok := <-hup; ok {
			stopDemoWorkers(project)
			os.RemoveAll(dir)
			os.Exit(129)
		}
	}()
	return func() {
		// Workers spawned in the demo would work on in a deleted folder.
		stopDemoWorkers(project)
		signal.Stop(hup)
		os.RemoveAll(dir)
	}
}

// openDemo opens the UI on the demo project, whose claims are its own
// lease files. A kept project's workers may outlive the UI: it says so.
func openDemo(project string, f *uiFlags, keep bool, stdout, stderr io.Writer) int {
	t, err := planfs.Open(project)
	if err != nil {
		return fail(stderr, exitError, "demo: %v", err)
	}
	f.demo = true
	code := openUI(t, f, nil, stderr)
	if keep && code == exitOK {
		// Without --keep the demo stops its workers as it leaves.
		tellStillRunning(stdout, project)
	}
	return code
}

// demoDir is where the sample project goes: root when given, else a new
// temporary folder.
func demoDir(root string) (string, error) {
	if root == "" {
		return os.MkdirTemp("", "fleetwatch-demo-")
	}
	return root, os.MkdirAll(root, 0o755)
}

// stopDemoWorkers stops the workers running in the demo project (those
// spawned from its UI) and waits a little for them to give their plans back.
func stopDemoWorkers(project string) {
	states, _ := look.ReadStates(project)
	var stopped []look.State
	for _, st := range states {
		if h := st.Health(time.Now()); st.Local() && (h == look.Live || h == look.Stale) && proc.Stop(st) == nil {
			stopped = append(stopped, st)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, st := range stopped {
		for syscall.Kill(st.PID, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// demoAgentCmd is the demo's stand-in coding agent, run by `work-once --run`
// as the demo's executor. It is left out of the usage text.
func demoAgentCmd() *cobra.Command {
	return leaf("demo-agent", "the demo's stand-in agent", func(fs *pflag.FlagSet) body {
		pace := fs.Duration("pace", time.Second, "about how long each step takes")
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) > 1 {
				return fail(stderr, exitError, "demo-agent: unexpected argument %q", pos[1])
			}
			if *pace < 0 {
				return fail(stderr, exitError, "--pace must not be negative")
			}
			if err := demo.Agent(demo.AgentEnvFromOS(), stdout, *pace); err != nil {
				return fail(stderr, exitError, "demo-agent: %v", err)
			}
			return exitOK
		}
	})
}
