package workers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	endpoints "github.com/fleetwatch/fleetwatch/registry"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/seat"
)

// Status is how a work-once run ended; its value is the process's exit
// code (anchor's: 0 ok, 1 nothing to do, 2 error).
type Status int

const (
	StatusOK      Status = 0
	StatusNothing Status = 1
	StatusError   Status = 2
	// going is a step that did not end the run.
	going Status = -1
)

// WorkOnce is one work-once run: the one loop that picks, claims, hands
// each plan to the agent and keeps its lease, whichever backend keeps the
// claims. Without Run it claims up to MaxPlans plans in a row and prints
// their paths, as anchor does; with Run it hands each to the executor
// before claiming the next, and stops at the first that does not end well.
type WorkOnce struct {
	Tree     *planfs.Tree
	Worker   model.Worker
	Endpoint endpoints.Endpoint
	// Claims keeps the leases; nil is the tree's own lease files (the
	// run then claims through claims.Local). Where names a remote backend
	// in messages ("--claims git"); Remote is the git remote feature
	// branches are pushed to.
	Claims        claims.Backend
	Where, Remote string
	TTL           float64 // seconds
	MaxPlans      int
	// Slug or Path names the one plan to claim; Token, the lease a named
	// remote claim resumes.
	Slug, Path, Token   string
	AllowAssigned       bool
	NoFit, NoDeps       bool
	Run, EnsureWorktree bool
	NeedBranch          bool // claims make a feature branch: skip plans whose branch git refuses
	// RegistryPath is endpoints.yaml (the executor's), RegistryGiven
	// whether it was named rather than the default.
	RegistryPath  string
	RegistryGiven bool
	Ports         look.PortRange
	// NewDriver makes the (unstarted) driver that runs argv, nil for a
	// claim-only run; its state file and log follow the run.
	NewDriver func(argv []string) (*Driver, error)
	// Stdout gets the plan paths and KEY=value lines anchor's callers
	// read; Echo, when set, every log line; Say one line for stderr.
	Stdout, Echo io.Writer
	Say          func(format string, args ...any)

	started           bool            // an agent was started on a plan
	saidSkip, resumed map[string]bool // plans said skipped; plans taken up from the inbox
	claimsHolder      claims.Holder
	lostRaces         int           // races lost so far: a loser spreads over the first picks
	noticed           bool          // the backend's notices were said
	ownPort, hadPort  bool          // this run assigned the agent's port; it had one before
	log               *look.Log     // the driver's, once started
	limits            config.Limits // fleetwatch.yaml's caps on live runs (caps.go)
}

// fail says one line and returns code.
func (w *WorkOnce) fail(code Status, format string, args ...any) Status {
	w.Say(format, args...)
	return code
}

func (w *WorkOnce) named() bool { return w.Slug != "" || w.Path != "" }

// Options are the pick's options for this worker at this moment.
func (w *WorkOnce) Options() model.Options {
	opt := model.Options{NoFitCheck: w.NoFit, NoDepCheck: w.NoDeps, NeedBranch: w.NeedBranch,
		Now: w.Tree.NowSeconds(), History: w.Tree.History()}
	opt.Refuse = SetupRefusal(w.Tree.Project, w.Worker.AgentID, w.EnsureWorktree && w.Run, w.Endpoint)
	return opt
}

// SetupRefusal is what a worker's own setup refuses of a plan, nil when
// nothing: by its name, for a worker whose worktree backend names things
// after it (backendNames), and by its size, for an endpoint whose model
// takes less than the plan's text (max_context).
func SetupRefusal(project, agent string, backendNames bool, ep endpoints.Endpoint) func(*model.Plan) string {
	var refuse []func(*model.Plan) string
	if backendNames {
		if r := planRefusal(project, agent); r != nil { // nil: no worktree backend
			refuse = append(refuse, r)
		}
	}
	if n, name := ep.MaxContext, ep.Name; n > 0 {
		refuse = append(refuse, func(p *model.Plan) string { return model.ContextProblem(p, name, n) })
	}
	if len(refuse) == 0 {
		return nil
	}
	return func(p *model.Plan) string {
		for _, r := range refuse {
			if why := r(p); why != "" {
				return why
			}
		}
		return ""
	}
}

// dayBudgetProblem says why this worker may claim nothing today, "" when
// it may: a spent daily budget of its endpoint, its tier or the fleet
// (fleetwatch.yaml's budgets:). It is idle, not an error: claims resume
// the next day or once the budget is raised.
func (w *WorkOnce) dayBudgetProblem() string {
	s, err := config.Load(w.Tree.Project)
	b := s.Budgets
	if err != nil || (b.FleetDay.None() && len(b.EndpointDay) == 0 && len(b.TierDay) == 0) {
		return ""
	}
	spent, err := ledger.ReadToday(w.Tree.Project, time.Now())
	if err != nil {
		return err.Error()
	}
	return ledger.DayProblem(b, spent, w.Endpoint.Name, w.Worker.Tier.String())
}

// endpointProblem says why this worker's endpoint may be called by no
// run now, "" when it may (endpointtrouble.go).
// With claims in a remote backend, the record there counts too.
func (w *WorkOnce) endpointProblem(ctx context.Context) string {
	name := w.Endpoint.Name
	if name == "" {
		return ""
	}
	if why := look.EndpointProblem(w.Tree.Project, name, time.Now()); why != "" {
		return why
	}
	board, ok := w.Claims.(claims.EndpointBoard)
	if !ok {
		return ""
	}
	why, err := look.BoardProblem(ctx, w.Tree.Project, name, board, time.Now())
	if err != nil {
		// A record that cannot be read never stops the fleet.
		w.Say("warning: endpoint %s's record in %s: %v", name, w.Where, err)
	}
	return why
}

// Do runs the loop; the driver's state file and log say what happened.
func (w *WorkOnce) Do(ctx context.Context) Status {
	if why := w.dayBudgetProblem(); why != "" {
		return w.fail(StatusNothing, "%s", why)
	}
	if why := w.endpointProblem(ctx); why != "" {
		// Idle, not an error: a watcher's next tick after the time
		// said claims again by itself.
		return w.fail(StatusNothing, "%s; claiming nothing", why)
	}
	if s, err := config.Load(w.Tree.Project); err == nil {
		w.limits = s.Limits // a bad file was refused before the loop began
	}
	w.Tree.RunsAs = w.runsAs()
	side, code := w.side(ctx)
	if code != going {
		return code
	}
	argv, port, code := w.runSetup()
	if code != going {
		return code
	}
	if w.Run {
		defer w.givePortBack(port)
	}
	d, code := w.startDriver(argv)
	if code != going {
		return code
	}
	if code := w.attachClaims(ctx, d); code != going {
		return code
	}
	code, note := w.each(ctx, side, d, port)
	if d != nil {
		d.Finish(int(code), note)
	}
	return code
}

// runSetup is, with Run, the executor's argv and the agent's port.
func (w *WorkOnce) runSetup() (argv []string, port int, code Status) {
	if !w.Run {
		return nil, 0, going
	}
	argv, err := w.executor()
	if err != nil {
		return nil, 0, w.fail(StatusError, "--run: %v", err)
	}
	if port, err = w.takePort(); err != nil {
		return nil, 0, w.fail(StatusError, "--run: %v", err)
	}
	return argv, port, going
}

// attachClaims ties the driver d (nil for a claim-only run without one) to
// what the claims backend offers: a session held while it runs, a fleet
// it publishes to, a board of endpoints.
func (w *WorkOnce) attachClaims(ctx context.Context, d *Driver) Status {
	if s, ok := w.Claims.(claims.Sessioner); ok && w.Run {
		if err := s.StartSession(ctx, w.ttl()); err != nil {
			code := w.fail(StatusError, "%s: %v", w.Where, err)
			d.Finish(int(code), "no claims session")
			return code
		}
	}
	if f, ok := w.Claims.(claims.Fleet); ok && w.Run && d != nil {
		d.PublishTo(f, w.ttl())
	}
	if b, ok := w.Claims.(claims.EndpointBoard); ok && d != nil {
		d.Board = b
	}
	return going
}

// takePort is the agent's port, and makes this driver a child subreaper:
// a daemon the agent starts (setsid, double fork) is re-parented to it,
// which stops it with the agent; without it the daemon would run on,
// unseen, after the plan is handed on.
func (w *WorkOnce) takePort() (int, error) {
	project, agent := w.Tree.Project, w.Worker.AgentID
	_, w.hadPort = look.PortOf(project, agent)
	port, err := look.AssignPort(project, agent, w.Ports)
	if err != nil {
		return 0, err
	}
	w.ownPort = true
	if err := proc.BecomeSubreaper(); err != nil {
		w.Say("warning: cannot become a child subreaper: %v", err)
	}
	return port, nil
}

// givePortBack returns a port first given to this run when no agent used it.
func (w *WorkOnce) givePortBack(port int) {
	if w.ownPort && !w.hadPort && !w.started {
		_ = look.ReleasePort(w.Tree.Project, w.Worker.AgentID, port)
	}
}

// startDriver starts the driver whose state file and log follow the run.
// A claim-only run can do without its state file, and must leave a
// running driver's alone: it goes on without one (nil).
func (w *WorkOnce) startDriver(argv []string) (*Driver, Status) {
	d, err := w.NewDriver(argv)
	if err == nil {
		err = d.Start(w.Echo)
	}
	if err == nil {
		w.log = d.Log
		return d, going
	}
	busy := errors.Is(err, errBusy)
	switch {
	case w.Run && busy:
		// A cron tick while the last run is still working: not an error.
		return nil, w.fail(StatusNothing, "--run: %v", err)
	case w.Run:
		return nil, w.fail(StatusError, "--run: %v", err)
	case !busy:
		w.Say("warning: %v", err)
	}
	return nil, going
}

// each claims and works plans until MaxPlans are done, none is left, or
// one does not end well.
func (w *WorkOnce) each(ctx context.Context, s claimSide, d *Driver, port int) (Status, string) {
	claimed, worked, refused := 0, 0, 0
	for claimed-refused < w.MaxPlans {
		c, code, note := w.claimNext(ctx, s, claimed, refused)
		if code != going {
			return code, note
		}
		if c == nil {
			break
		}
		claimed++
		if d != nil {
			d.Claimed(c.rel)
		}
		head, out := w.pathOut(c)
		wt, code := s.worktree(c, out)
		if code != StatusOK {
			return code, "no worktree for " + c.rel
		}
		if !w.Run && w.named() {
			break
		} else if !w.Run {
			continue
		}
		code, note, skipped := w.work(ctx, s, d, c, wt, port, head.Bytes())
		switch {
		case skipped:
			refused++
			continue
		case code != StatusOK:
			return code, note
		}
		worked++
		if w.named() {
			break
		}
	}
	switch {
	case claimed == refused:
		return StatusNothing, "nothing to claim"
	case w.Run:
		return StatusOK, fmt.Sprintf("worked %d plan(s)", worked)
	}
	return StatusOK, fmt.Sprintf("claimed %d plan(s)", claimed)
}

// claimNext claims the next plan under the caps. A nil claim with going
// ends the loop well: none is left, or the caps are full once some plan
// was claimed (those stand); any other code ends it with note.
func (w *WorkOnce) claimNext(ctx context.Context, s claimSide, claimed, refused int) (*claim, Status, string) {
	if ctx.Err() != nil {
		reason := "stopped before claiming: " + context.Cause(ctx).Error()
		return nil, w.fail(StatusError, "%s", reason), reason
	}
	why, code := w.capsFull(ctx)
	var c *claim
	if why == "" {
		var note string
		if c, code, note = s.next(ctx, claimed); code != going {
			return nil, code, note
		}
		if c.rel == "" {
			return nil, going, ""
		}
		why, code = w.capsHold(ctx, s, c)
	}
	switch {
	case why == "":
		return c, going, ""
	case code == StatusNothing && claimed > refused:
		w.Say("%s", why) // the plans claimed so far stand
		return nil, going, ""
	}
	return nil, w.fail(code, "%s", why), why
}

// pathOut is where c's worktree lines go: with Run, to head, which
// stdout gets once the agent is started on it (a path on stdout means
// someone works it); without, stdout at once, after c's path.
func (w *WorkOnce) pathOut(c *claim) (head *bytes.Buffer, out io.Writer) {
	head = &bytes.Buffer{}
	fmt.Fprintln(head, w.Tree.Abs(c.rel))
	if w.Run {
		return head, head
	}
	w.Stdout.Write(head.Bytes())
	head.Reset()
	return head, w.Stdout
}

// work hands one claimed plan to the executor in its worktree wt, with
// the lease kept by the claim's side; head is what stdout gets once the
// agent has started. skipped is a plan given back for its own fault.
func (w *WorkOnce) work(ctx context.Context, s claimSide, d *Driver, c *claim, wt string, port int, head []byte) (code Status, note string, skipped bool) {
	if ctx.Err() != nil {
		reason := "driver stopped: " + context.Cause(ctx).Error()
		return w.handedBack(reason, c.rel, s.handBack(c, reason)), reason, false
	}
	job, err := w.jobFor(c.rel, c.token, wt, port)
	if err != nil {
		// Nobody will work the plan: give it back, saying why.
		reason := err.Error()
		rerr := s.handBack(c, reason)
		if rerr == nil && errors.Is(err, seat.ErrPlanRefused) && !w.named() {
			// The plan's own fault: any worker would fail on it, and on
			// it alone. Stopping here would stall the fleet on it.
			w.Say("skipped %s: %s; released it", c.rel, reason)
			return StatusOK, reason, true
		}
		return w.handedBack(reason, c.rel, rerr), reason, false
	}
	job.PlanFile = s.planFile(c, wt)
	job.OnStart = func() {
		w.started = true
		w.Stdout.Write(head)
	}
	if k := s.keeper(c); k != nil {
		d.Keeper = k
	}
	o := d.Run(ctx, job)
	d.Keeper = nil
	s.ran(c) // remote: the branch is pushed whatever the outcome (unless the lease is lost)
	if !o.OK() {
		return w.fail(StatusError, "%s", o.Note), o.Note, false
	}
	fmt.Fprintln(w.Stdout, w.Tree.Abs(o.Plan))
	return StatusOK, o.Note, false
}

// handedBack is the exit of a run that gave rel back for reason; err is
// the release's own failure.
func (w *WorkOnce) handedBack(reason, rel string, err error) Status {
	if err != nil {
		return w.fail(StatusError, "%s; could not release %s: %v", reason, rel, err)
	}
	return w.fail(StatusError, "%s; released %s", reason, rel)
}

// executor is the command line Run hands each plan to: the endpoint's
// command, else the registry's executor.
func (w *WorkOnce) executor() ([]string, error) {
	ep, regPath := w.Endpoint, w.RegistryPath
	argv := ep.Command
	if argv == nil {
		reg, err := endpoints.Load(regPath)
		switch {
		case errors.Is(err, fs.ErrNotExist) && !w.RegistryGiven:
			if _, serr := os.Stat(regPath); serr == nil {
				// scaffold's file, every endpoint still commented out
				return nil, fmt.Errorf("no executor: %s lists no endpoint yet: uncomment one ('fleetwatch agents' shows them), or create %s with `executor: [your-agent, \"{plan}\"]`", regPath, regPath)
			}
			return nil, fmt.Errorf("no executor: create %s with `executor: [your-agent, \"{plan}\"]`", regPath)
		case err != nil:
			return nil, err
		}
		argv = reg.Executor
	}
	if argv == nil {
		where := regPath
		if ep.Name != "" {
			where = fmt.Sprintf("%s (or `command:` on endpoint %s)", regPath, ep.Name)
		}
		return nil, fmt.Errorf("no executor: add `executor: [your-agent, \"{plan}\"]` to %s", where)
	}
	return proc.CheckExecutor(argv, w.Tree.Project)
}
