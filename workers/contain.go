package workers

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/agentfile"
	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/contain"
	"github.com/fleetwatch/fleetwatch/workers/coord"
	"github.com/fleetwatch/fleetwatch/workers/egress"
	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// containment settles, once per driver, whether its agents run contained
// and the line that says so; under `sandbox: require` on a host without
// Landlock it is the error that stops the driver from starting.
func (d *Driver) containment() error {
	contained, closed, line, err := egress.Status(d.Sandbox, d.Egress)
	if err != nil {
		return err
	}
	d.contained, d.netClosed, d.state.Contained = contained, closed, line
	return nil
}

// openBox prepares job's run in dir. Every run gets a socket and a temp
// dir, contained or not: the verbs an agent runs take one path.
func (d *Driver) openBox(job Job, dir string) (*contain.Box, error) {
	run, err := os.MkdirTemp("", "fw-")
	if err != nil {
		return nil, err
	}
	b := &contain.Box{Run: run, Tmp: filepath.Join(run, "tmp"), Out: filepath.Join(run, "out")}
	fail := func(err error) (*contain.Box, error) {
		b.Close()
		return nil, err
	}
	for _, p := range []string{b.Tmp, b.Out} {
		if err := os.Mkdir(p, 0o700); err != nil {
			return fail(err)
		}
	}
	home := filepath.Join(d.Tree.Project, filepath.FromSlash(contain.SandboxDir), tree.SafeID(d.Worker.AgentID))
	cache := filepath.Join(home, "cache")
	if err := tree.MkdirIn(d.Tree.Project, cache); err != nil {
		return fail(fmt.Errorf("%s: %v", cache, tree.ErrText(err)))
	}
	sock := filepath.Join(run, "sock")
	if b.Broker, err = contain.ListenBroker(sock); err != nil {
		return fail(fmt.Errorf("driver socket: %v", tree.ErrText(err)))
	}
	b.Env = append(sandbox.PrivateEnv(b.Tmp, cache), contain.SocketEnv+"="+sock)
	if d.contained {
		// What tools ask before they act unprompted as root (Claude Code's
		// --dangerously-skip-permissions): this run is sandboxed.
		b.Env = append(b.Env, "IS_SANDBOX=1")
	}
	b.Policy.Write = []string{b.Tmp, b.Out, cache}
	if err := d.closeNetwork(b, job); err != nil {
		return fail(err)
	}
	if err := d.boxWorktree(b, job, home); err != nil {
		return fail(err)
	}
	b.Policy.Write = append(b.Policy.Write, d.SandboxWrite...)
	d.boxGroup(b)
	if job.Mode == proc.ModePlan && job.Proposal != "" {
		b.Proposal = filepath.Join(b.Out, filepath.Base(job.Proposal))
	}
	return b, nil
}

// boxWorktree lets the run write job's worktree, watching what it
// writes there, and, contained, commit through a git box of its own.
func (d *Driver) boxWorktree(b *contain.Box, job Job, home string) error {
	if job.Worktree == "" {
		return nil
	}
	b.Writes = contain.WatchWrites(job.Worktree)
	b.Policy.Write = append(b.Policy.Write, job.Worktree)
	if !d.contained || !tree.HasRef(job.Worktree, "HEAD") {
		return nil
	}
	ref := "refs/heads/" + tree.FeatureBranch(model.SlugOf(path.Base(job.Rel)))
	g, err := contain.OpenGitBox(d.Tree.Project, job.Worktree, filepath.Join(home, "git"), ref)
	if err != nil {
		return err
	}
	b.Git = g
	b.Env = append(b.Env, g.Env()...)
	b.Policy.Write = append(b.Policy.Write, g.Writable()...)
	return nil
}

// boxGroup puts the run in a cgroup of its own, where there can be one:
// whatever the agent forks stays in it; else its process group and
// adopted daemons are tracked instead.
func (d *Driver) boxGroup(b *contain.Box) {
	g, err := sandbox.NewGroup(sandbox.GroupName(d.Tree.Project, d.Worker.AgentID), d.runLimits())
	switch {
	case err == nil:
		b.Group = g
		if missing := g.Unbounded(); missing != "" {
			d.Log.Printf("the run's cgroup: %s; not contained here: %s", g.Held(), missing)
			d.sayUncontained(missing)
		} else {
			d.Log.Printf("the run's cgroup: %s", g.Held())
		}
	case !d.saidGroup:
		d.saidGroup = true
		d.Log.Printf("no cgroup for the agent (%v): its process group and the daemons it leaves are tracked instead", err)
		d.sayUncontained("no cgroup: no process or memory limit, a pause stops its process group only")
	}
}

// closeNetwork lets the contained agent connect over TCP only to the
// run's egress proxy (named in the standard proxy variables, which leave
// loopback unproxied) and its own ports; the metering proxy's port is
// added once it runs (connectTo). With `egress: open`, or no Landlock TCP
// rules, the network stays open, as the driver's log said.
func (d *Driver) closeNetwork(b *contain.Box, job Job) error {
	if !d.contained || !d.netClosed {
		b.Policy.OpenNetwork = true
		return nil
	}
	p, err := egress.Start(d.Egress.Allow, func(line string) { d.Log.Printf("%s", line) })
	if err != nil {
		return err
	}
	b.Egress = p
	b.Env = append(b.Env, p.Env()...)
	b.Policy.Connect = append(append(b.Policy.Connect, p.Port()), d.Egress.DirectPorts()...)
	for _, port := range append([]int{job.Port, job.TalkPort}, job.Ports...) {
		if port > 0 && port <= 65535 {
			b.Policy.Connect = append(b.Policy.Connect, uint16(port))
		}
	}
	return nil
}

// sayUncontained adds what is not contained on this machine to the line
// the state file (and so the Workers pane) shows, once.
func (d *Driver) sayUncontained(what string) {
	if !strings.Contains(d.state.Contained, what) {
		d.state.Contained += "; " + what
	}
}

// runLimits bound each of the driver's runs: its endpoint's, else the
// defaults.
func (d *Driver) runLimits() sandbox.Limits {
	l := sandbox.DefaultLimits()
	if d.MaxProcs > 0 {
		l.Procs = d.MaxProcs
	}
	if d.MaxMemory > 0 {
		l.Memory = d.MaxMemory
	}
	return l
}

// closeBox ends r's box once the run is over (the agent and what it left
// are stopped by then).
func (d *Driver) closeBox(r *running) {
	// A bring the pulse started ends first (unless one is stuck: the
	// driver went on without it); none starts after.
	if !r.bringStuck {
		select {
		case r.bringing <- struct{}{}:
		case <-time.After(bringWait):
		}
	}
	if g := r.box.Git; g != nil {
		if err := g.Settle(); err != nil {
			d.Log.Printf("could not reset the worktree's index to its branch: %v", err)
		}
	}
	// The cgroup is emptied before the state file forgets it.
	r.box.Close()
	d.recordAgent(nil)
	d.save()
}

// bringWait bounds how long the driver waits for a bring before its plan
// moves on: git on the agent's objects is bounded by its own timeout, but
// nothing the agent made of its store may hold the driver for good.
const bringWait = time.Minute

// bringBranch brings what the agent committed in its own store into the
// project's branch; the driver calls it while it holds the lease, and
// before the plan moves. It waits for a bring the pulse started, and
// either at most bringWait. The error says why the commits are not in.
func (d *Driver) bringBranch(r *running) error {
	if r.box == nil || r.box.Git == nil {
		return nil
	}
	if r.bringStuck {
		return errors.New("an earlier bring never finished")
	}
	limit := time.NewTimer(bringWait)
	defer limit.Stop()
	select {
	case r.bringing <- struct{}{}:
	case <-limit.C:
		r.bringStuck = true
		d.Log.Printf("the agent's commits were still being brought in after %v: going on without them", bringWait)
		return fmt.Errorf("still being brought in after %v", bringWait)
	}
	done := make(chan error, 1)
	go func() {
		defer func() { <-r.bringing }()
		done <- d.bring(r.box.Git)
	}()
	select {
	case err := <-done:
		return err
	case <-limit.C:
		r.bringStuck = true
		d.Log.Printf("bringing the agent's commits took more than %v: going on without them", bringWait)
		return fmt.Errorf("bringing them took more than %v", bringWait)
	}
}

// bringSoon is the pulse's bringBranch, off the loop: git reads objects
// the agent wrote, and however long that takes, renewals, budget checks
// and a stop go on. One bring at a time: while the last still runs, this
// pulse brings nothing.
func (d *Driver) bringSoon(r *running) {
	if r.box == nil || r.box.Git == nil {
		return
	}
	select {
	case r.bringing <- struct{}{}:
	default:
		return
	}
	go func() {
		defer func() { <-r.bringing }()
		_ = d.bring(r.box.Git)
	}()
}

func (d *Driver) bring(g *contain.GitBox) error {
	tip, err := g.Bring(d.Worker.AgentID)
	switch {
	case err != nil:
		d.Log.Printf("could not bring the agent's commits: %v", err)
	case tip != "":
		d.Log.Printf("brought %s to %.12s", g.Ref, tip)
	}
	return err
}

// bringEnd brings the agent's commits in once the run is over, however it
// ended (an exit of any code, a scope or budget stop, the driver's stop, a
// lost lease), before its plan moves on: brought is not landed, and a
// stopped run's work stays on its branch for the operator to judge. A plan
// the agent handed on itself was brought as it went. A lost lease brings
// only while nobody else holds the plan and the run's worktree still has
// the branch: once another agent has it, the branch is theirs.
func (d *Driver) bringEnd(r *running) {
	switch {
	case r.box == nil || r.box.Git == nil || r.handedOn != "":
		return
	case d.holds(r.job.Rel, r.me):
	case d.Keeper == nil && someoneElseHolds(d.Tree, r.job.Rel, r.me.AgentID):
		d.Log.Printf("the lease is another agent's now: the commits in %s stay there", r.box.Git.Store)
		return
	case !contain.CheckedOutIn(r.box.Git.Admin, r.box.Git.Ref):
		d.Log.Printf("%s is no longer checked out in %s: the commits in %s stay there", r.box.Git.Ref, r.box.Git.Wt, r.box.Git.Store)
		return
	}
	_ = d.bringBranch(r)
}

// someoneElseHolds reports whether an agent other than agent holds rel's
// plan under a live lease, wherever it has gone.
func someoneElseHolds(t *planfs.Tree, rel, agent string) bool {
	_, name, err := planfs.SplitRel(rel)
	if err != nil {
		return false
	}
	now := t.NowSeconds()
	for _, l := range model.Lanes {
		if ls := t.ReadLease(string(model.RelOf(l, name))); ls != nil && ls.AgentID != agent && (ls.Corrupt != "" || ls.Active(now)) {
			return true
		}
	}
	return false
}

// handInProposal copies the proposal a contained plan turn wrote in its
// own folder to where the coordinator keeps it; the agent never writes
// the inbox itself.
func (d *Driver) handInProposal(r *running) error {
	if r.box == nil || r.box.Proposal == "" {
		return nil
	}
	// The agent's to make: a FIFO, a device or a symlink there is refused
	// at once, never waited on.
	data, err := agentfile.Read(r.box.Proposal, coord.MaxProposal)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // none written: the turn's end says so
	}
	if err != nil {
		return err
	}
	if err := tree.MkdirIn(d.Tree.Project, filepath.Dir(r.job.Proposal)); err != nil {
		return err
	}
	out, err := os.OpenFile(r.job.Proposal, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	if _, err := out.Write(data); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// logContained records in the event log how the agent runs: contained or
// not (the driver's log said so once, when it started).
func (d *Driver) logContained(job Job) {
	event := "contained"
	if !d.contained {
		event = "uncontained"
	}
	d.Tree.LogEvent(planfs.Event{
		Event: event, Slug: model.SlugOf(path.Base(job.Rel)), From: job.Rel, To: job.Rel, AgentID: d.Worker.AgentID, Reason: d.state.Contained,
	})
}
