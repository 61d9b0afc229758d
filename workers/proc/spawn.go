package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	endpoints "github.com/fleetwatch/fleetwatch/registry"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// MaxSpawnPlans bounds --max-plans for a spawned worker: a worker that
// would run for days is a timer's job.
const MaxSpawnPlans = 100

// SpawnSpec is one worker to start by hand: what `fleetwatch work-once`
// gets on its command line, and the binary that runs it.
type SpawnSpec struct {
	Bin      string // absolute path of the fleetwatch binary
	Project  string // absolute project root
	Agent    string
	Tier     string // a tier word, or "" with Endpoint
	Endpoint string
	Model    string
	Registry string // "" for work-once's default, <project>/endpoints.yaml
	Run      bool   // hand the plan to the executor; else claim only
	Worktree bool   // work each claim in the agent's own git worktree
	MaxPlans int    // 0 or 1: one plan
	// Claims is the claims backend ("git", "etcd") of the face that
	// spawns, when it was chosen there; "" leaves it to fleetwatch.yaml.
	Claims string
	// ReadOnly is a viewer's spawn (a session whose tree is read-only):
	// Start refuses it with planfs.ErrReadOnly before anything runs.
	ReadOnly bool
}

// Args is the command line after the binary: the same work-once call a
// cron line or a systemd timer makes (WorkArgs), plus --max-plans.
func (s SpawnSpec) Args() []string {
	args := WorkArgs(s.Project, Spec{Agent: s.Agent, Tier: s.Tier, Endpoint: s.Endpoint, Model: s.Model, Registry: s.Registry, Run: s.Run, Worktree: s.Worktree})
	if s.MaxPlans > 1 {
		args = append(args, "--max-plans", strconv.Itoa(s.MaxPlans))
	}
	if s.Claims != "" {
		args = append(args, "--claims", s.Claims)
	}
	return args
}

// Check refuses a spec work-once would refuse, or that could not be read
// back from a state file or a log name: one line naming the field.
func (s SpawnSpec) Check() error {
	switch {
	case !filepath.IsAbs(s.Bin):
		return fmt.Errorf("binary %q: not an absolute path", s.Bin)
	case !filepath.IsAbs(s.Project):
		return fmt.Errorf("project %q: not an absolute path", s.Project)
	}
	if err := checkAgentID(s.Agent); err != nil {
		return err
	}
	if s.Tier != "" {
		if _, err := model.ParseTier(s.Tier); err != nil {
			return err
		}
	}
	for _, f := range []struct{ name, v string }{{"endpoint", s.Endpoint}, {"model", s.Model}, {"registry", s.Registry}} {
		if err := PlainText(f.v); err != nil {
			return fmt.Errorf("%s: %v", f.name, err)
		}
	}
	switch {
	case s.Registry != "" && s.Endpoint == "":
		return errors.New("a registry needs an endpoint")
	case s.MaxPlans < 0 || s.MaxPlans > MaxSpawnPlans:
		return fmt.Errorf("max plans must be from 1 to %d, not %d", MaxSpawnPlans, s.MaxPlans)
	}
	// The backends are the registry's: whatever the binary registered.
	if names := claims.Names(); s.Claims != "" && !slices.Contains(names, s.Claims) {
		last := len(names) - 1
		return fmt.Errorf("claims: %q is not %s or %s", s.Claims, strings.Join(names[:last], ", "), names[last])
	}
	return nil
}

// checkAgentID refuses an agent id that cannot name a worker: empty, with
// blanks or control characters, starting with `-` (a flag), or longer than
// a log file name keeps (SafeID's 80).
func checkAgentID(id string) error {
	switch {
	case id == "":
		return errors.New("agent id is empty")
	case strings.HasPrefix(id, "-"):
		return fmt.Errorf("agent id %q starts with -", id)
	case len(id) > 80:
		return fmt.Errorf("agent id is %d bytes long; at most 80", len(id))
	}
	if err := PlainText(id); err != nil {
		return fmt.Errorf("agent id: %v", err)
	}
	if strings.IndexFunc(id, unicode.IsSpace) >= 0 {
		return fmt.Errorf("agent id %q has a blank", id)
	}
	return nil
}

// Child is a worker Start started from this process. It is reaped as soon
// as it exits, so it never lingers as a zombie.
type Child struct {
	// State is what is known before the worker writes its own state file:
	// pid, agent, tier, model, host and start time, state running.
	State look.State
	done  chan struct{}
	code  int
}

// Done is closed once the worker has exited and been reaped.
func (c *Child) Done() <-chan struct{} { return c.done }

// Exited reports whether the worker has exited, and its exit code then
// (128 + the signal's number when a signal ended it).
func (c *Child) Exited() (code int, ok bool) {
	select {
	case <-c.done:
		return c.code, true
	default:
		return 0, false
	}
}

// spawn starts s as cron would and returns its pid; see Start.
func spawn(s SpawnSpec) (pid int, err error) {
	c, err := Start(s)
	if err != nil {
		return 0, err
	}
	return c.State.PID, nil
}

// Start starts `Bin work-once ...` for s, detached as cron would run it:
// its own session (so it outlives this process and a closed terminal),
// stdin and stdout /dev/null (the driver logs in its own words), stderr
// appended to the agent's log, working directory the project. A goroutine reaps it. It refuses an agent id
// whose state file shows a worker still running (live or stale), or that
// shares its state file with another agent id, and a ReadOnly spec.
func Start(s SpawnSpec) (*Child, error) {
	if s.ReadOnly {
		return nil, fmt.Errorf("spawn %s: %w", s.Agent, planfs.ErrReadOnly)
	}
	if s.MaxPlans == 0 {
		s.MaxPlans = 1
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	now := time.Now()
	if err := refuseRunning(s.Project, s.Agent, now); err != nil {
		return nil, err
	}
	logPath := look.LogPath(s.Project, s.Agent)
	if err := tree.FleetDir(s.Project); err != nil {
		return nil, err
	}
	if err := tree.MkdirIn(s.Project, filepath.Dir(logPath)); err != nil {
		return nil, err
	}
	look.RotateLog(logPath)
	log, err := tree.OpenIn(s.Project, logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	args := s.Args()
	fmt.Fprintf(log, "%s %s starting %s %s\n", now.UTC().Format(look.LogTimeLayout), look.StreamFleet, filepath.Base(s.Bin), strings.Join(QuoteArgs(args), " "))
	cmd := exec.Command(s.Bin, args...)
	cmd.Dir = s.Project
	// The driver logs what it claims and where it runs in its own words;
	// the paths work-once prints for scripts would only repeat them. Its
	// errors (a missing executor) go to the log, where the operator looks.
	cmd.Stderr = log // a file: the child writes it directly
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		err = fmt.Errorf("start %s: %v", s.Bin, tree.ErrText(err))
		fmt.Fprintf(log, "%s %s %v\n", time.Now().UTC().Format(look.LogTimeLayout), look.StreamFleet, err)
		return nil, err
	}
	tier := s.Tier
	if tier == "" && s.Endpoint == "" {
		tier = "mid" // work-once's default
	}
	c := &Child{done: make(chan struct{}), State: look.State{
		PID: cmd.Process.Pid, AgentID: s.Agent, Tier: tier, Model: s.Model, Endpoint: s.Endpoint,
		Started: look.Stamp{Time: now}, State: look.StateRunning, Host: look.Hostname(),
	}}
	go func() {
		err := cmd.Wait()
		c.code = 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			c.code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				c.code = 128 + int(ws.Signal())
			}
		}
		close(c.done)
	}()
	return c, nil
}

// refuseRunning refuses agent when a state file that is its own, or one it
// would share (two ids with one SafeID), shows a worker not yet exited.
func refuseRunning(project, agent string, now time.Time) error {
	states, _ := look.ReadStates(project)
	for _, st := range states {
		if tree.SafeID(st.AgentID) != tree.SafeID(agent) {
			continue
		}
		switch h := st.Health(now); {
		case st.AgentID != agent && h != look.Exited && h != look.Dead:
			return fmt.Errorf("agent id %q shares its state and log files with %q, which is running: pick another id", agent, st.AgentID)
		case h == look.Live || h == look.Stale:
			what := "pid " + strconv.Itoa(st.PID)
			if st.Host != "" && st.Host != look.Hostname() {
				what += " on " + st.Host
			}
			return fmt.Errorf("%s already has a %s worker (%s); stop it first or pick another agent id", agent, h, what)
		}
	}
	return nil
}

// QuoteArgs quotes the arguments a shell would split, for log lines.
func QuoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t'\"\\$`") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}

// UniqueAgentID is the first of prefix-1, prefix-2, … that no state file,
// registry endpoint, lease holder, agent worktree or taken names, nor
// shares a state or log file name with one that does.
func UniqueAgentID(project, prefix string, taken ...string) string {
	used := map[string]bool{}
	add := func(id string) {
		if id != "" {
			used[tree.SafeID(id)] = true
		}
	}
	for _, id := range taken {
		add(id)
	}
	states, _ := look.ReadStates(project)
	for _, st := range states {
		add(st.AgentID)
	}
	if reg, err := endpoints.Load(endpoints.Path(project)); err == nil {
		for _, ep := range reg.Endpoints {
			add(ep.Name)
		}
	}
	if t, err := planfs.Open(project); err == nil {
		leases, _ := t.Leases()
		for _, l := range leases {
			add(l.AgentID)
		}
	}
	if wts, err := look.List(project); err == nil {
		for _, wt := range wts {
			add(wt.AgentID)
		}
	}
	prefix = strings.TrimRight(prefix, "-")
	if prefix == "" {
		prefix = "worker"
	}
	for n := 1; ; n++ {
		id := prefix + "-" + strconv.Itoa(n)
		if !used[tree.SafeID(id)] {
			return id
		}
	}
}
