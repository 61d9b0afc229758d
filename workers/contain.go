package workers

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/agentfile"
	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/coord"
	"github.com/fleetwatch/fleetwatch/workers/egress"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// SandboxDir holds each agent's own git store and caches, under the
// project: var/fleet/sandbox/<agent>/.
const SandboxDir = "var/fleet/sandbox"

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

// box is one run's containment: a private folder for the driver's socket
// and the agent's temp dir (removed when the run ends), the agent's own
// git store when it works in a worktree, its cgroup, and the policy and
// environment it starts with.
type box struct {
	group    *sandbox.Group // the agent's cgroup, when cgroup v2 lets us make one
	run      string         // private: sock and tmp/
	tmp      string
	out      string // where a plan turn writes its proposal
	git      *gitBox
	broker   *broker
	egress   *egress.Proxy // the run's way out, when its network is contained
	env      []string
	policy   sandbox.Policy
	proposal string // the agent's copy of job.Proposal, when it writes one
	// writes follows the writes in the worktree from before the agent
	// starts, so none it makes at once is missed (the scope scanner's).
	writes *writeWatch
}

// openBox prepares job's run in dir. Every run gets a socket and a temp
// dir, contained or not: the verbs an agent runs take one path.
func (d *Driver) openBox(job Job, dir string) (*box, error) {
	run, err := os.MkdirTemp("", "fw-")
	if err != nil {
		return nil, err
	}
	b := &box{run: run, tmp: filepath.Join(run, "tmp"), out: filepath.Join(run, "out")}
	fail := func(err error) (*box, error) {
		b.close()
		return nil, err
	}
	for _, p := range []string{b.tmp, b.out} {
		if err := os.Mkdir(p, 0o700); err != nil {
			return fail(err)
		}
	}
	home := filepath.Join(d.Tree.Project, filepath.FromSlash(SandboxDir), tree.SafeID(d.Worker.AgentID))
	cache := filepath.Join(home, "cache")
	if err := tree.MkdirIn(d.Tree.Project, cache); err != nil {
		return fail(fmt.Errorf("%s: %v", cache, tree.ErrText(err)))
	}
	sock := filepath.Join(run, "sock")
	if b.broker, err = listenBroker(sock); err != nil {
		return fail(fmt.Errorf("driver socket: %v", tree.ErrText(err)))
	}
	b.env = append(sandbox.PrivateEnv(b.tmp, cache), SocketEnv+"="+sock)
	if d.contained {
		// What tools ask before they act unprompted as root (Claude Code's
		// --dangerously-skip-permissions): this run is sandboxed.
		b.env = append(b.env, "IS_SANDBOX=1")
	}
	b.policy.Write = []string{b.tmp, b.out, cache}
	if err := d.closeNetwork(b, job); err != nil {
		return fail(err)
	}
	if job.Worktree != "" {
		b.writes = watchWrites(job.Worktree)
		b.policy.Write = append(b.policy.Write, job.Worktree)
		ref := "refs/heads/" + tree.FeatureBranch(model.SlugOf(path.Base(job.Rel)))
		if d.contained && tree.HasRef(job.Worktree, "HEAD") {
			g, err := openGitBox(d.Tree.Project, job.Worktree, filepath.Join(home, "git"), ref)
			if err != nil {
				return fail(err)
			}
			b.git = g
			b.env = append(b.env, g.env()...)
			b.policy.Write = append(b.policy.Write, g.writable()...)
		}
	}
	b.policy.Write = append(b.policy.Write, d.SandboxWrite...)
	// Whatever the agent forks stays in its cgroup, where there can be one;
	// else its process group and adopted daemons are tracked instead.
	if g, err := sandbox.NewGroup(sandbox.GroupName(d.Tree.Project, d.Worker.AgentID), d.runLimits()); err == nil {
		b.group = g
		if missing := g.Unbounded(); missing != "" {
			d.Log.Printf("the run's cgroup: %s; not contained here: %s", g.Held(), missing)
			d.sayUncontained(missing)
		} else {
			d.Log.Printf("the run's cgroup: %s", g.Held())
		}
	} else if !d.saidGroup {
		d.saidGroup = true
		d.Log.Printf("no cgroup for the agent (%v): its process group and the daemons it leaves are tracked instead", err)
		d.sayUncontained("no cgroup: no process or memory limit, a pause stops its process group only")
	}
	if job.Mode == ModePlan && job.Proposal != "" {
		b.proposal = filepath.Join(b.out, filepath.Base(job.Proposal))
	}
	return b, nil
}

// closeNetwork lets the contained agent connect over TCP only to the
// run's egress proxy (named in the standard proxy variables, which leave
// loopback unproxied) and its own ports; the metering proxy's port is
// added once it runs (connectTo). With `egress: open`, or no Landlock TCP
// rules, the network stays open, as the driver's log said.
func (d *Driver) closeNetwork(b *box, job Job) error {
	if !d.contained || !d.netClosed {
		b.policy.OpenNetwork = true
		return nil
	}
	p, err := egress.Start(d.Egress.Allow, func(line string) { d.Log.Printf("%s", line) })
	if err != nil {
		return err
	}
	b.egress = p
	b.env = append(b.env, p.Env()...)
	b.policy.Connect = append(append(b.policy.Connect, p.Port()), d.Egress.DirectPorts()...)
	for _, port := range append([]int{job.Port}, job.Ports...) {
		if port > 0 && port <= 65535 {
			b.policy.Connect = append(b.policy.Connect, uint16(port))
		}
	}
	return nil
}

// connectTo lets the agent connect to the port of a driver's loopback
// URL (its metering proxy).
func (b *box) connectTo(rawURL string) {
	if port, ok := egress.PortOf(rawURL); ok && !b.policy.OpenNetwork {
		b.policy.Connect = append(b.policy.Connect, port)
	}
}

// sayUncontained adds what is not contained on this machine to the line
// the state file (and so the Workers pane) shows, once.
func (d *Driver) sayUncontained(what string) {
	if !strings.Contains(d.state.Contained, what) {
		d.state.Contained += "; " + what
	}
}

// start starts cmd alone in a session, with no capability, in the box's
// cgroup when it has one and inside its domain when contained. release,
// once cmd has exited, lets the thread that started it go.
func (b *box) start(contained bool, cmd *exec.Cmd) (release func(), err error) {
	s := sandbox.Spawn{Group: b.group}
	if contained {
		s.Policy = &b.policy
	}
	return s.Start(cmd)
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

func (b *box) close() {
	if b == nil {
		return
	}
	b.broker.close()
	if b.egress != nil {
		b.egress.Close()
	}
	b.writes.close()
	b.group.Close()
	os.RemoveAll(b.run)
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
	if g := r.box.git; g != nil {
		if err := g.settle(); err != nil {
			d.Log.Printf("could not reset the worktree's index to its branch: %v", err)
		}
	}
	// The cgroup is emptied before the state file forgets it.
	r.box.close()
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
	if r.box == nil || r.box.git == nil {
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
		done <- d.bring(r.box.git)
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
	if r.box == nil || r.box.git == nil {
		return
	}
	select {
	case r.bringing <- struct{}{}:
	default:
		return
	}
	go func() {
		defer func() { <-r.bringing }()
		_ = d.bring(r.box.git)
	}()
}

func (d *Driver) bring(g *gitBox) error {
	tip, err := g.bring(d.Worker.AgentID)
	switch {
	case err != nil:
		d.Log.Printf("could not bring the agent's commits: %v", err)
	case tip != "":
		d.Log.Printf("brought %s to %.12s", g.ref, tip)
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
	case r.box == nil || r.box.git == nil || r.handedOn != "":
		return
	case d.holds(r.job.Rel, r.me):
	case d.Keeper == nil && someoneElseHolds(d.Tree, r.job.Rel, r.me.AgentID):
		d.Log.Printf("the lease is another agent's now: the commits in %s stay there", r.box.git.store)
		return
	case !checkedOutIn(r.box.git.admin, r.box.git.ref):
		d.Log.Printf("%s is no longer checked out in %s: the commits in %s stay there", r.box.git.ref, r.box.git.wt, r.box.git.store)
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

// checkedOutIn reports whether the worktree whose admin folder is admin
// (the project's, never the agent's to write) has ref checked out: no
// hand-off has taken the branch to another worktree.
func checkedOutIn(admin, ref string) bool {
	data, err := gitenv.ReadFile(filepath.Join(admin, "HEAD"), 4096)
	return err == nil && strings.TrimSpace(string(data)) == "ref: "+ref
}

// handInProposal copies the proposal a contained plan turn wrote in its
// own folder to where the coordinator keeps it; the agent never writes
// the inbox itself.
func (d *Driver) handInProposal(r *running) error {
	if r.box == nil || r.box.proposal == "" {
		return nil
	}
	// The agent's to make: a FIFO, a device or a symlink there is refused
	// at once, never waited on.
	data, err := agentfile.Read(r.box.proposal, coord.MaxProposal)
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
