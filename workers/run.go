package workers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fleetwatch/fleetwatch/internal/agentout"
	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/contain"
	"github.com/fleetwatch/fleetwatch/workers/converse"
	"github.com/fleetwatch/fleetwatch/workers/landing"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// DefaultGrace is how long a stopped executor gets between SIGTERM and
// SIGKILL.
const DefaultGrace = 10 * time.Second

// Driver is the loop around one worker's coding agent: it runs the
// executor on each claimed plan, keeps the lease alive while the executor
// runs (the heartbeat comes from here, never from the model), logs
// everything to var/fleet/logs/<agent>.log and keeps the worker's state file
// current.
type Driver struct {
	Tree     *planfs.Tree
	Worker   model.Worker
	Endpoint string
	// BaseURL is where the agent's model calls go, behind the run's
	// metering proxy (registry.Endpoint.Upstream); "" meters nothing.
	BaseURL string
	// Preset names the endpoint's agent preset ("" for its own command:),
	// whose output the driver reads for the run's end (agentout);
	// AgentEnv are its environment templates.
	Preset   string
	AgentEnv []string
	Argv     []string // executor template; nil for a claim-only worker
	// Resume is the build argv that resumes a plan's last session on
	// this endpoint ({session}); nil: every build starts afresh.
	Resume []string
	TTL    float64
	Grace  time.Duration
	Log    *look.Log
	// Keeper, when set, holds the lease instead of the tree's lease file
	// (a remote claims backend); the plan then stays in its ready lane.
	Keeper Keeper
	// Sandbox is fleetwatch.yaml's `sandbox:`; SandboxWrite the extra
	// paths the endpoint lets its agents write (`sandbox_write:`).
	Sandbox      sandbox.Mode
	SandboxWrite []string
	// MaxProcs and MaxMemory bound each run in its cgroup (the endpoint's
	// max_processes, max_memory); 0 keeps sandbox.DefaultLimits.
	MaxProcs, MaxMemory int64
	// Egress is fleetwatch.yaml's `egress:`: the hosts its agents reach
	// through the driver's egress proxy, or an open network.
	Egress config.Egress
	// AutoCommit is the endpoint's `commit: auto`: a build that exits 0
	// with edits and no commit gets them committed by fleetwatch instead
	// of being parked.
	AutoCommit bool
	// Board, when set, carries the endpoint's trouble to every machine
	// (a remote claims backend; endpointtrouble.go).
	Board claims.EndpointBoard
	// Supervisor is the command that outlives this driver to stop its run
	// should it die (Supervise, given supervisorArgs); nil: none.
	Supervisor []string
	// Talk is the endpoint's `talk:`: its builds are conversations in
	// that protocol (talk.go), whose first turn is Prompt (a template
	// like an argv word); Asks sends the agent's permission requests to a
	// person.
	Talk   converse.Protocol
	Prompt string
	Asks   bool

	state     look.State
	settings  config.Settings // fleetwatch.yaml's prices: and budgets:
	control   chan os.Signal  // the operator's pause (SIGUSR1) and resume (SIGUSR2)
	contained bool            // agents run in a Landlock domain
	netClosed bool            // and connect over TCP only to the driver's ports
	saidGroup bool            // the log said why agents get no cgroup
	lock      *os.File
	treeGone  bool      // the heartbeat found .plans/ gone
	fleet     *fleetPub // publishes this worker's record (publish.go); nil: none
	watchdog  *os.File  // the supervisor's pipe: it reads end of file when this driver ends
	mailbox   *look.Mailbox
}

// errBusy means another driver runs under the same agent id: two agents in
// one worktree would undo each other's work.
var errBusy = errors.New("already running")

// Start records the worker as running and opens its log. echo, when not
// nil, also receives every log line's text.
func (d *Driver) Start(echo io.Writer) error {
	if d.Grace <= 0 {
		d.Grace = DefaultGrace
	}
	if err := d.lockAgent(); err != nil {
		return err
	}
	// This agent id's last driver may have died with its agent running:
	// nothing of that run works on beside this one, and what it committed
	// reaches its branch before this driver's store is refilled.
	left, leftErr := proc.KillLeftovers(d.Tree.Project, d.Worker.AgentID)
	var brought string
	if leftErr == nil {
		brought, leftErr = proc.BringLeftover(d.Tree.Project, d.Worker.AgentID)
	}
	log, err := look.OpenLog(d.Tree.Project, d.Worker.AgentID, echo)
	if err != nil {
		return fmt.Errorf("worker log: %w", err)
	}
	d.Log = log
	switch {
	case leftErr != nil:
		d.Log.Printf("could not stop or bring in what the last driver left: %v", leftErr)
	case left > 0:
		d.Log.Printf("stopped %d process group(s) and process(es) the last driver of %s left running", left, d.Worker.AgentID)
	}
	if brought != "" {
		d.Log.Printf("brought the last driver's commits to %.12s", brought)
	}
	now := d.Tree.Now()
	d.state = look.State{
		PID: os.Getpid(), Host: look.Hostname(), AgentID: d.Worker.AgentID, Tier: d.Worker.Tier.String(),
		Model: d.Worker.Model, Endpoint: d.Endpoint, Started: look.Stamp{Time: now}, LastHeartbeat: look.Stamp{Time: now},
		State: look.StateRunning, HeartbeatEvery: d.heartbeatEvery().Seconds(),
	}
	if d.Argv == nil {
		d.state.Note = "claiming"
	}
	if err := d.containment(); err != nil && d.Argv != nil {
		d.Log.Printf("%v", err)
		d.Log.Close()
		d.lock.Close()
		return err
	}
	if d.settings, err = config.Load(d.Tree.Project); err != nil {
		d.Log.Printf("%v: runs are metered but no budget or price applies", err)
	}
	if d.Argv != nil {
		// People's notes, interrupts and answers for its runs (talk.go).
		if d.mailbox, err = look.OpenMailbox(d.Tree.Project, d.Worker.AgentID); err != nil {
			d.Log.Printf("no mail folder: %v; notes reach this worker only through the claims backend", err)
		}
	}
	d.control = make(chan os.Signal, 1)
	signal.Notify(d.control, syscall.SIGUSR1, syscall.SIGUSR2)
	d.state.Pausable = true
	d.Log.Printf("start pid %d agent %s tier %s model %q", d.state.PID, d.Worker.AgentID, d.Worker.Tier, d.Worker.Model)
	d.Log.Printf("%s", d.state.Contained)
	d.startSupervisor()
	return d.save()
}

// leaseEvery is how often the lease is renewed: TTL/3, so two renewals can
// fail before it runs out. A lease lasts at least a second whatever the TTL
// (planfs), and a day between renewals is plenty for any longer one; within
// those bounds the interval is always a valid, positive duration.
func (d *Driver) leaseEvery() time.Duration {
	return time.Duration(min(max(1, d.TTL), 3*maxLeaseEvery.Seconds()) / 3 * float64(time.Second))
}

const maxLeaseEvery = 24 * time.Hour

// heartbeatEvery is how often the state file says the driver is alive: as
// often as the lease, and at least every minute, so the UI tells a hung
// worker from a busy one within minutes even under a day-long lease.
func (d *Driver) heartbeatEvery() time.Duration {
	return min(d.leaseEvery(), maxHeartbeat)
}

var maxHeartbeat = time.Minute // a variable for tests

func (d *Driver) save() error {
	if err := look.WriteState(d.Tree.Project, d.state); err != nil {
		d.Log.Printf("cannot write state file: %v", tree.ErrText(err))
		return err
	}
	return nil
}

// Claimed records a claim in the log and the state file.
func (d *Driver) Claimed(rel string) {
	d.Log.Printf("claimed %s", rel)
	d.state.Plan = rel
	d.save()
	d.publish()
}

// Finish records the worker as exited with code and a short note, and
// closes the log.
func (d *Driver) Finish(code int, note string) {
	d.state.State = look.StateExited
	d.state.ExitCode = &code
	d.state.Note = note
	d.state.LastHeartbeat = look.Stamp{Time: d.Tree.Now()}
	d.Log.Printf("exit %d: %s", code, note)
	d.save()
	d.stopSupervisor() // after the save: it reads that no run is left
	d.publish()
	d.endPublishing()
	d.mailbox.Close()
	d.Log.Close()
	if d.lock != nil {
		d.lock.Close()
	}
	if d.control != nil {
		signal.Stop(d.control)
	}
}

// lockAgent holds var/fleet/workers/<agent>.lock for the driver's life; the
// kernel drops it when the driver dies, however it dies.
func (d *Driver) lockAgent() error {
	p := proc.LockPath(d.Tree.Project, d.Worker.AgentID)
	if err := tree.FleetDir(d.Tree.Project); err != nil {
		return err
	}
	f, err := tree.OpenIn(d.Tree.Project, p, os.O_CREATE|os.O_RDWR)
	if err != nil {
		return err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("agent %s is %w%s", d.Worker.AgentID, errBusy, proc.RunningWhat(d.Tree.Project, d.Worker.AgentID))
		}
		return err
	}
	d.lock = f
	return nil
}

// Job is one claimed plan to hand to the executor.
type Job struct {
	Rel string // the claimed plan, in in-progress/
	// PlanFile is the plan the agent reads, when not Rel in the tree (a
	// remote claim's plan, read from the worktree's checkout).
	PlanFile string
	Token    string // its lease's token: the driver acts on the plan only while the lease has it
	Worktree string // where the executor runs; the project root when ""
	Port     int
	// OnStart, when set, is called once the executor has started, so a
	// caller says the plan is being worked only when it is.
	OnStart func()

	// Plan first (the coordinator): Mode "plan" is a plan-only turn that
	// writes Proposal (the ProposalN'th for this plan) and leaves the plan
	// waiting in the inbox; a build of an approved plan has ApprovedPlan.
	// Argv, when set, replaces the driver's executor for this job (an
	// endpoint's plan_command). RunID names this run in the proposal's
	// authorship record.
	Mode                             string
	Argv                             []string
	Proposal, Feedback, ApprovedPlan string
	ProposalN                        int
	RunID                            string

	// The scope scanner: Scope is what the build may touch (nil: no
	// declared scope, only .plans/ is checked); StopOnViolation stops the
	// agent and parks the plan at the first path outside it; Base is the
	// integration branch the change is measured from, as a full ref
	// (refs/heads/dev) or a commit id.
	Scope           *model.Scope
	StopOnViolation bool
	Base            string

	// The worker's backend (fleetwatch.yaml `worktree:`): its whole port
	// block and the variables of .env.fleetwatch, added to the executor's
	// environment.
	Ports []int
	// TalkPort is a conversation's own loopback port ({talk_port}).
	TalkPort int
	Env      []string
}

// Outcome is how a job ended.
type Outcome struct {
	Code    int    // the executor's exit status; -1 when it never ran or died by a signal
	Plan    string // where the plan is now ("" when it could not be found)
	Stopped bool   // the driver was told to stop: the executor was stopped and the plan released
	Lost    string // why the lease was lost mid-run, when it was
	Note    string // a few words for the state file and the operator
}

// OK reports whether the plan was worked and handed on.
func (o Outcome) OK() bool { return o.Code == 0 && !o.Stopped && o.Lost == "" }

// Run hands job's plan to the executor and waits for it. While it runs the
// lease is renewed every TTL/3. However the run ends, what a contained
// agent committed is brought into the plan's branch before the plan moves
// (bringEnd). Exit 0 moves the plan to review-needed/ unless the executor
// moved it itself; a failed run hands it back at once (failedRun: endpoint
// trouble marks the endpoint, a task failure counts toward blocked/). When
// ctx ends (SIGTERM to the driver) the executor gets SIGTERM, then SIGKILL
// after the grace, and the plan goes back to the lane it came from.
func (d *Driver) Run(ctx context.Context, job Job) Outcome {
	r, failed := d.start(job)
	if r == nil {
		return failed
	}
	defer d.closeBox(r)
	defer r.meter.Close()
	if job.OnStart != nil {
		job.OnStart()
	}
	// A pause asked between runs was meant for the run that ended.
	for len(d.control) > 0 {
		<-d.control
	}
	o := d.watch(ctx, r)
	d.state.Asking = nil
	d.recordRun(r, o)
	d.keepSession(r, o)
	if o.OK() {
		d.dropNotes(r)
	}
	return o
}

// running is one started executor, as its driver watches it.
type running struct {
	job       Job
	me        planfs.Actor // who the driver acts as: the agent, with its lease's token
	cmd       *exec.Cmd
	box       *contain.Box
	pgid      int
	startTip  string     // the branch's tip as the run began: a build must move it
	done      chan error // the agent's exit, once
	streams   *proc.AgentStreams
	out, errw *look.LineWriter
	handedOn  string // where the agent's own complete, park or release sent the plan
	meter     *ledger.RunMeter
	result    *agentout.Reader // the tool's own word on its turn (reading)
	// bringing holds a token while the agent's commits are being brought
	// in: one bring at a time, the pulse's off the loop (bringSoon).
	bringing   chan struct{}
	bringStuck bool // a bring outlived bringWait: the run ends without waiting for it
	resumed    bool // the run resumes the plan's last session
	talk       *talking
	asks       []*waiting // the agent's questions waiting for a person, oldest first
	questions  int        // questions the agent asked its driver, for their ids
	notes      int        // the bytes of the plan's kept notes the run was given
}

// start starts the executor on job's plan in its own process group. When it
// cannot start, the plan goes back to its lane and the outcome says why.
func (d *Driver) start(job Job) (*running, Outcome) {
	agent := d.Worker.AgentID
	dir := cmp.Or(job.Worktree, d.Tree.Project)
	if d.talks(job) {
		job.TalkPort = freeLoopbackPort()
	}
	ph := d.placeholders(job, dir)
	r := &running{job: job, me: planfs.Actor{AgentID: agent, Token: job.Token}, bringing: make(chan struct{}, 1)}
	if checksCommit(job) {
		r.startTip = branchTip(job.Worktree)
	}
	bx, m, meterEnv, err := d.prepare(job, dir, &ph)
	if err != nil {
		d.Log.Printf("%v", err)
		return nil, d.giveBack(job.Rel, r.me, err.Error(), Outcome{Code: -1, Note: err.Error()})
	}
	r.meter = m
	argv := ph.Expand(d.argvFor(job, &ph))
	r.resumed = ph.Session != ""
	d.state.Plan, d.state.Worktree, d.state.Port = job.Rel, job.Worktree, job.Port
	d.state.Note = "running " + filepath.Base(argv[0])
	if bx.Group != nil {
		// Recorded before the agent starts: should this driver die
		// before the agent's pid is, its supervisor still finds the run.
		d.state.Cgroup = bx.Group.Path
	}
	d.save()
	d.logContained(job)
	r.box = bx

	r.cmd = exec.Command(argv[0], argv[1:]...)
	r.cmd.Dir = dir
	// PWD as a shell would set it: ours names the driver's folder.
	r.cmd.Env = gitenv.Env(append(append(append(append(append(append(ph.Env(), job.Env...), bx.Env...), meterEnv...), ph.Expand(d.AgentEnv)...), d.talkEnv(r)...), "PWD="+dir)...)
	// Pipes of our own rather than writers: Wait then returns when the
	// agent exits, not when the last process holding its stdout does, and
	// the driver can stop what the agent left behind at once.
	r.out, r.errw = d.Log.Writer(look.StreamOut), d.Log.Writer(look.StreamErr)
	r.out.Tap = r.reading(m, d.Preset)
	streams, pipes, err := d.startStreams(r)
	var release func()
	if err == nil {
		// Its own process group, so stopping it reaches every process the
		// agent started; and it hears of the driver's death instead of
		// working on with nobody renewing its lease.
		r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		sandbox.SetPdeathsig(r.cmd.SysProcAttr, syscall.SIGTERM)
		d.Log.Printf("run %s in %s (port %d)", strings.Join(proc.QuoteArgs(argv), " "), dir, job.Port)
		release, err = bx.Start(d.contained, r.cmd)
		streams.Started()
		if err != nil {
			streams.Drain()
		}
	}
	if err != nil {
		bx.Close()
		m.Close()
		d.recordAgent(nil)
		reason := "executor did not start: " + tree.ErrText(err)
		d.Log.Printf("%s", reason)
		return nil, d.giveBack(job.Rel, r.me, reason, Outcome{Code: -1, Note: reason})
	}
	bx.Broker.SetAgent(r.cmd.Process.Pid)
	r.streams, r.pgid = streams, r.cmd.Process.Pid
	d.recordAgent(r)
	d.save()
	r.done = make(chan error, 1)
	go func() {
		err := r.cmd.Wait()
		release()
		r.done <- err
	}()
	if pipes != nil {
		if err := d.startTalk(r, *pipes, &ph); err != nil {
			return nil, d.talkFailed(r, err)
		}
	}
	return r, Outcome{}
}

// placeholders are what job's argv and prompt are filled in with.
func (d *Driver) placeholders(job Job, dir string) proc.Placeholders {
	ph := proc.Placeholders{
		Plan: cmp.Or(job.PlanFile, d.Tree.Abs(job.Rel)), Worktree: dir, AgentID: d.Worker.AgentID, Model: d.Worker.Model,
		BaseURL: d.BaseURL, Slug: model.SlugOf(path.Base(job.Rel)), Port: job.Port,
		Root: d.Tree.Project, LeaseToken: job.Token, TalkPort: job.TalkPort,
	}
	d.jobPlaceholders(job, &ph)
	return ph
}

// stop ends whatever is left of the agent and logs the rest of its output;
// done is nil once the agent's exit has been received.
func (d *Driver) stop(r *running, done <-chan error) {
	if r.meter.Paused != "" {
		// A frozen process hears SIGTERM only once it runs again; its
		// proxy stays shut, so it spends nothing more.
		r.thaw(d.Log)
	}
	d.stopAgent(r.pgid, done)
	r.streams.Drain()
	r.out.Flush()
	r.errw.Flush()
}

// watch keeps the lease and the state file alive while the agent runs, and
// handles how it ends: its own exit, a lost lease, or the driver told to
// stop.
func (d *Driver) watch(ctx context.Context, r *running) Outcome {
	pulse := time.NewTicker(d.heartbeatEvery())
	defer pulse.Stop()
	beat := time.NewTicker(d.leaseEvery())
	defer beat.Stop()
	renewing := true
	scan := d.newScanner(r)
	defer scan.close()
	for {
		select {
		case err := <-r.done:
			// Whatever the agent left running (a dev server on its port, a
			// daemon that called setsid) goes with it.
			d.stop(r, nil)
			return d.finished(r, scan, exitStatus(err, r.cmd), renewing)
		case q := <-r.box.Broker.Requests():
			d.answer(r, q)
		case ev, ok := <-r.talkEvents():
			d.onEvent(r, ev, ok)
		case m := <-d.mailbox.Messages():
			d.mailbox.Reply(m.ID, d.onMail(r, m))
		case m := <-d.fleetMail():
			// From another machine: its sender hears no reply; the log
			// and the event log say how it was taken.
			d.onMail(r, m)
		case sig := <-d.control:
			d.pauseByHand(r, sig)
		case <-r.meter.Spent:
			d.weigh(r)
		case <-scan.due():
			if o, over := d.scanTick(r, scan); over {
				return o
			}
		case <-pulse.C:
			if o, over := d.onPulse(r, &renewing); over {
				return o
			}
			if o, over := d.talkTick(r, renewing); over {
				return o
			}
		case <-beat.C:
			if o, over := d.renew(r, &renewing); over {
				return o
			}
		case why := <-d.fleetStops():
			return d.stopped(r, why, renewing)
		case <-ctx.Done():
			return d.stopped(r, stopReason(ctx), renewing)
		}
	}
}

// stopReason says why the driver stops, with ctx's cause when it has one.
func stopReason(ctx context.Context) string {
	if c := context.Cause(ctx); c != nil && c != context.Canceled {
		return "driver stopped: " + c.Error()
	}
	return "driver stopped"
}

// onPulse is watch's every heartbeat: it collects the agent's orphans,
// records and weighs the run, publishes the state, and notices a plan
// taken back; over is true when the agent has been stopped.
func (d *Driver) onPulse(r *running, renewing *bool) (o Outcome, over bool) {
	// Orphans of the agent that exit are collected as they go;
	// those that run on are recorded, for whoever comes next
	// should this driver die.
	proc.ReapAdopted(proc.AdoptedOrphans(r.pgid))
	d.recordAgent(r)
	d.weigh(r)
	d.state.LastHeartbeat = look.Stamp{Time: d.Tree.Now()}
	d.save()
	if stop := d.publish(); stop != "" {
		return d.stopped(r, stop, *renewing), true
	}
	if !*renewing {
		return o, false
	}
	d.bringSoon(r)
	// A plan taken back (an operator's release, a recover) is
	// noticed within a pulse, not only at the next renewal, which
	// can be many minutes away: a second worker may already have it.
	if d.holds(r.job.Rel, r.me) {
		return o, false
	}
	return d.renew(r, renewing)
}

// renew renews r's lease while renewing, which it sets to whether to go
// on; over is true when the lease was lost and the agent has been
// stopped.
func (d *Driver) renew(r *running, renewing *bool) (o Outcome, over bool) {
	if !*renewing {
		return o, false
	}
	lost, keep := d.heartbeatOf(r)
	*renewing = keep
	if lost == "" {
		return o, false
	}
	d.Log.Printf("lease lost: %s; stopping the agent", lost)
	d.stop(r, r.done)
	d.bringEnd(r)
	return Outcome{Code: -1, Plan: d.whereIs(r.job.Rel), Lost: lost, Note: "lease lost: " + lost}, true
}

// stopped stops the agent for the driver's own stop and hands its plan
// back: to its lane, or to blocked/ with what it spent when it was paused
// at its budget (the operator chose to stop rather than extend it).
func (d *Driver) stopped(r *running, reason string, renewing bool) Outcome {
	d.Log.Printf("%s; stopping the agent (grace %v)", reason, d.Grace)
	paused := r.meter.Paused
	d.stop(r, r.done)
	d.bringEnd(r)
	var o Outcome
	if strings.HasPrefix(paused, "budget") && renewing {
		o = d.parkBlocked(r, paused)
	} else {
		o = d.giveBack(r.job.Rel, r.me, reason, Outcome{Code: -1, Note: reason})
	}
	o.Stopped = true
	return o
}

// heartbeatOf is r's heartbeat, none once the agent handed its plan on
// itself: no lease is left to renew, and a remote backend's refusal to
// renew it is no loss.
func (d *Driver) heartbeatOf(r *running) (lost string, keep bool) {
	if r.handedOn != "" {
		return "", false
	}
	return d.heartbeat(r.job.Rel, r.me)
}

// heartbeat renews the lease. It returns why the lease is lost when someone
// else now holds the plan, it went back to be claimed again, or someone
// other than its holder moved it on (an operator's park --force): the agent
// must stop. It also says whether to keep renewing: not once the agent has
// moved the plan on itself.
func (d *Driver) heartbeat(rel string, me planfs.Actor) (lost string, keep bool) {
	if d.Keeper != nil {
		return d.keeperBeat(rel)
	}
	l, err := d.Tree.Renew(rel, me, d.TTL)
	switch {
	case err == nil:
		d.Log.Printf("heartbeat: lease on %s renewed until %s", rel, time.Unix(int64(l.ExpiresAt), 0).UTC().Format(time.RFC3339))
		return "", true
	case errors.Is(err, planfs.ErrNotOwner):
		return tree.ErrText(err), false
	case errors.Is(err, planfs.ErrNoLease):
		return d.noLease(rel, me), false
	}
	if errors.Is(err, planfs.ErrNoTree) {
		// Said once, not every pulse; renewing goes on in case the tree
		// comes back (a checkout that swaps it out and back).
		if !d.treeGone {
			d.Log.Printf("the plan tree %s is gone (deleted by the agent?): no lease to renew", d.Tree.Plans)
		}
		d.treeGone = true
		return "", true
	}
	d.treeGone = false
	d.Log.Printf("heartbeat failed, will retry: %v", err)
	return "", true
}

// noLease says why rel's lease is lost now that it has none: released or
// taken back, or moved on by someone else; "" when the agent moved the
// plan on itself.
func (d *Driver) noLease(rel string, me planfs.Actor) string {
	now := d.whereIs(rel)
	back := now == "" || now == rel || model.Rel(now).Lane().Ready()
	by := d.movedBy(rel, me)
	switch {
	case back && by != "":
		return fmt.Sprintf("%s: released or taken back by %s", rel, by)
	case back:
		return fmt.Sprintf("%s: released or taken back", rel)
	case by != "":
		return fmt.Sprintf("%s: moved to %s by %s", rel, now, by)
	}
	d.Log.Printf("the agent moved its plan to %s; heartbeat no longer needed", now)
	return ""
}

// movedBy names who moved the plan away from rel when it was not its
// holder (the lease's token, or its agent id for a verb run without one),
// as the event log says; "" when the holder did.
func (d *Driver) movedBy(rel string, me planfs.Actor) string {
	ev := d.Tree.LastMoveFrom(rel, 500)
	switch {
	case ev == nil:
		return "" // no word of it: trust the agent, as before
	case ev.Forced:
		return ev.AgentID
	case ev.Lease != "" && me.Token != "" && ev.Lease != me.Token:
		return ev.AgentID
	}
	return ""
}

// holds reports whether rel's lease on disk is still this driver's (same
// token); reading it is cheap and, unlike a renewal, writes nothing.
func (d *Driver) holds(rel string, me planfs.Actor) bool {
	if d.Keeper != nil {
		return d.Keeper.Holds()
	}
	return planfs.HeldBy(d.Tree.ReadLease(rel), me)
}

// finished handles the executor's own exit.
func (d *Driver) finished(r *running, scan *scanner, code int, renewing bool) Outcome {
	rel := r.job.Rel
	how := fmt.Sprintf("agent exited %d", code)
	if code < 0 {
		how = "agent killed by a signal"
	}
	code, why := r.talkExit(code)
	if why != "" {
		how += ", " + why
	}
	o := Outcome{Code: code, Plan: cmp.Or(r.handedOn, d.whereIs(rel))}
	failed := d.judgeExit(r, &o, how, renewing)
	if o.Plan == rel {
		// Whatever its exit code, what it committed reaches the branch
		// before the plan goes anywhere.
		d.bringEnd(r)
	}
	if failed {
		return d.failedRun(r, o, how)
	}
	if o.Note != "" {
		d.Log.Printf("%s", o.Note)
		return o
	}
	// The last look at what the build touched, before anything moves on.
	if o, over := d.scanFinal(r, scan, o); over {
		return o
	}
	if o, over := d.noCommit(r, o); over {
		return o
	}
	d.ranWell(r)
	if r.job.Mode == proc.ModePlan {
		return d.planTurnDone(r, o)
	}
	return d.toReview(r, o)
}

// judgeExit settles what the agent's exit (how) means from where its plan
// (o.Plan) is now: a note in o when the run ends there (plan gone, or
// moved on by the agent), or failed when it failed holding its plan.
func (d *Driver) judgeExit(r *running, o *Outcome, how string, renewing bool) (failed bool) {
	rel, code := r.job.Rel, o.Code
	switch {
	case o.Plan == "" && !tree.IsFolder(d.Tree.Plans):
		o.Code = -1
		o.Note = fmt.Sprintf("%s, and the plan tree %s is gone: the agent deleted it", how, d.Tree.Plans)
	case o.Plan == "":
		// Deleted, not handed on: nobody would find the work.
		o.Code = -1
		o.Note = fmt.Sprintf("%s, but its plan %s is gone", how, rel)
	case code != 0 && o.Plan != rel:
		o.Note = fmt.Sprintf("%s after moving its plan to %s", how, o.Plan)
	case code != 0 || (r.result.Result().Failed && renewing && r.handedOn == ""):
		return true
	case !renewing || r.handedOn != "" || o.Plan != rel:
		o.Note = "agent exited 0 and moved its plan to " + o.Plan
	}
	return false
}

// toReview sends a build that exited well to review-needed.
func (d *Driver) toReview(r *running, o Outcome) Outcome {
	rel := r.job.Rel
	dst, err := d.completePlan(rel, model.ReviewNeeded, r.me)
	if err != nil {
		o.Plan = d.whereIs(rel)
		o.Code = -1
		o.Note = "agent exited 0, but the plan could not go to review-needed: " + tree.ErrText(err)
		d.Log.Printf("%s", o.Note)
		return o
	}
	o.Plan = dst
	o.Note = "agent exited 0; " + dst + " waits for review"
	// A private plan (.local.md) never goes to the forge.
	if d.Keeper == nil && !strings.HasSuffix(dst, ".local.md") {
		if pr := landing.PublishSoon(d.Tree, model.SlugOf(path.Base(dst))); pr != "" {
			o.Note += "; " + pr
		}
	}
	d.Log.Printf("%s", o.Note)
	return o
}

// giveBack releases rel to the lane it came from, recording why, if this
// agent still holds it.
func (d *Driver) giveBack(rel string, me planfs.Actor, reason string, o Outcome) Outcome {
	dst, err := d.releasePlan(rel, me, reason)
	if err != nil {
		o.Plan = d.whereIs(rel)
		d.Log.Printf("could not release %s: %v", rel, err)
		return o
	}
	o.Plan = dst
	o.Note = reason + "; released " + rel + " to " + dst
	d.Log.Printf("released %s to %s", rel, dst)
	return o
}

// whereIs finds the plan that was at rel: rel itself, or the same file name
// in another lane; "" when it is gone.
func (d *Driver) whereIs(rel string) string {
	if d.Keeper != nil {
		return rel // a remote claim's plan is not moved in this tree
	}
	if _, err := os.Stat(d.Tree.Abs(rel)); err == nil {
		return rel
	}
	_, name, err := planfs.SplitRel(rel)
	if err != nil {
		return ""
	}
	for _, l := range model.Lanes {
		r := string(model.RelOf(l, name))
		if _, err := os.Stat(d.Tree.Abs(r)); err == nil {
			return r
		}
	}
	return ""
}

// exitStatus is the executor's exit code; -1 when a signal ended it or
// Wait failed before it exited.
func exitStatus(err error, cmd *exec.Cmd) int {
	if cmd.ProcessState == nil {
		return -1
	}
	return cmd.ProcessState.ExitCode()
}
