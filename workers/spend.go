package workers

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/internal/spend"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/contain"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// budgetNotice is the share of a budget at which the driver says so once.
const budgetNotice = 0.8

// prepare opens the run's box and its meter; the error is the reason the
// run cannot start.
func (d *Driver) prepare(job Job, dir string, ph *proc.Placeholders) (*contain.Box, *ledger.RunMeter, []string, error) {
	bx, err := d.openBox(job, dir)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("cannot prepare the agent's sandbox: %s", tree.ErrText(err))
	}
	if bx.Proposal != "" {
		ph.Proposal = bx.Proposal
	}
	m, env, err := d.openMeter(job, bx, ph)
	if err != nil {
		bx.Close()
		return nil, nil, nil, fmt.Errorf("cannot start the run's metering proxy: %s", tree.ErrText(err))
	}
	if m.Proxy != nil {
		bx.ConnectTo(m.Proxy.URL())
	}
	return bx, m, env, nil
}

// openMeter starts the run's meter: its proxy, when the endpoint has a
// base_url, in front of the agent's {base_url}.
func (d *Driver) openMeter(job Job, bx *contain.Box, ph *proc.Placeholders) (*ledger.RunMeter, []string, error) {
	m, env, url, err := ledger.NewRunMeter(d.BaseURL, bx.Out)
	if err != nil {
		return nil, nil, err
	}
	m.Slug = model.SlugOf(path.Base(job.Rel))
	m.Budget = planBudget(job, d.Tree)
	if spent, err := ledger.ReadSpent(d.Tree.Project, time.Now()); err == nil {
		m.Before = spent.Plan[m.Slug]
	} else {
		d.Log.Printf("usage ledger: %v", err)
	}
	ph.BaseURL = url
	return m, env, nil
}

// planBudget is the plan's own `- **Budget:**`, read from its text.
func planBudget(job Job, t *planfs.Tree) spend.Limit {
	p := job.PlanFile
	if p == "" {
		p = t.Abs(job.Rel)
	}
	// A worktree's plan may be the last agent's doing: never a FIFO.
	text, err := readBounded(p, 1<<20)
	if err != nil {
		return spend.Limit{}
	}
	return model.ParseHeader(text).Budget
}

// recordRun appends the run's record to the ledger, where agents cannot
// write.
func (d *Driver) recordRun(r *running, o Outcome) {
	m := r.meter
	t := m.Tally(d.settings, d.Worker.Model)
	if err := m.UsageRefused(); err != nil {
		d.Log.Printf("the agent's usage file is not read: %v", err)
	}
	u := t.Usage
	run := ledger.Run{
		ID: r.job.RunID, Plan: m.Slug, Agent: d.Worker.AgentID, Tier: d.Worker.Tier.String(), Endpoint: d.Endpoint,
		Model: u.Model, Host: look.Hostname(), Input: u.Input, Output: u.Output, Cached: u.Cached, CostUSD: t.Spent.USD,
		Priced: t.Priced, Source: t.Source, Start: m.Started, End: time.Now(), Exit: o.Code,
		Mode: cmp.Or(r.job.Mode, proc.ModeBuild), Claim: d.claimOf(r), Committed: r.startTip != "" && branchTip(r.job.Worktree) != r.startTip,
		NotDaily: t.NotDaily, Estimated: u.Estimated, Session: r.session(),
	}
	if run.ID == "" {
		run.ID = fmt.Sprintf("%s-%d", d.Worker.AgentID, m.Started.UnixNano())
	}
	if err := ledger.Append(d.Tree.Project, run); err != nil {
		d.Log.Printf("%v", err)
		return
	}
	if u.Estimated > 0 {
		d.Log.Printf("spent %s (%s; %d of %d calls answered with no usage that could be read, estimated from their bytes)", t.Spent, t.Source, u.Estimated, u.Calls)
		return
	}
	d.Log.Printf("spent %s (%s)", t.Spent, t.Source)
}

// claimOf is what the run said of its work: a ## Result section in the
// plan as its worktree holds it, else at the end of its output.
func (d *Driver) claimOf(r *running) string {
	if r.job.Worktree != "" {
		rel := filepath.Join(planfs.Dir, filepath.FromSlash(r.job.Rel))
		if f, err := safepath.OpenFile(r.job.Worktree, filepath.ToSlash(rel), os.O_RDONLY, 0); err == nil {
			data, _ := io.ReadAll(io.LimitReader(f, 1<<20))
			f.Close()
			if c := ledger.ParseResult(string(data)); c != "" {
				return c
			}
		}
	}
	r.meter.Mu.Lock()
	defer r.meter.Mu.Unlock()
	if c := ledger.ParseResult(r.meter.Rep.Text()); c != "" {
		return c
	}
	return ledger.ParseResult(string(r.meter.Tail))
}

// limits are the run's and the plan's budgets as they stand, the
// operator's extensions added.
func (d *Driver) limits(m *ledger.RunMeter) (run, plan spend.Limit) {
	ext, err := ledger.Extended(d.Tree.Project, m.Slug)
	if err != nil {
		d.Log.Printf("%v", err)
	}
	plan = d.settings.Budgets.Plan
	if !m.Budget.None() {
		plan = m.Budget
	}
	return ledger.Raise(d.settings.Budgets.Run, ext), ledger.Raise(plan, ext)
}

// weigh reads the run's spend once, for the state file and against its
// budgets.
func (d *Driver) weigh(r *running) {
	t := r.meter.Tally(d.settings, d.Worker.Model).Spent
	d.state.Spent = t
	d.budgetTick(r, t)
}

// budgetTick weighs the run's spend t against its budgets: a notice at
// 80 %, a pause at 100 %, and a paused run resumed once its budget was
// raised past what it spent.
func (d *Driver) budgetTick(r *running, t ledger.Totals) {
	m := r.meter
	if d.settings.Budgets.Run.None() && d.settings.Budgets.Plan.None() && m.Budget.None() {
		return // no budget: no extension to read either
	}
	runLimit, planLimit := d.limits(m)
	frac, what, limit := t.Fraction(runLimit), "the run's budget", runLimit
	if f := m.Before.Plus(t).Fraction(planLimit); f > frac {
		frac, what, limit = f, "the plan's budget", planLimit
	}
	switch {
	case frac >= 1 && m.Paused == "":
		d.pause(r, fmt.Sprintf("budget reached: %s (%s) spent: %s this run, %s on the plan", what, limit, t, m.Before.Plus(t)))
	case frac < 1 && strings.HasPrefix(m.Paused, "budget"):
		d.resume(r, "its budget was extended to "+limit.String())
	case frac >= budgetNotice && !m.Said:
		m.Said = true
		d.Log.Printf("%.0f %% of %s (%s) spent: %s", 100*frac, what, limit, t)
		d.Tree.LogEvent(planfs.Event{Event: "budget-notice", Slug: m.Slug, AgentID: d.Worker.AgentID,
			Reason: fmt.Sprintf("%.0f %% of %s (%s)", 100*frac, what, limit)})
	}
}

// pause stops the agent where it is: every process of its run frozen, its
// proxy holding requests. The lease is kept alive and nothing is lost.
func (d *Driver) pause(r *running, why string) {
	m := r.meter
	m.Paused = why
	if m.Proxy != nil {
		m.Proxy.Pause()
	}
	r.freeze(d.Log)
	d.Log.Printf("paused: %s", why)
	d.state.Paused, d.state.PausedAt = why, look.Stamp{Time: d.Tree.Now()}
	d.save()
	d.Tree.LogEvent(planfs.Event{Event: "paused", Slug: m.Slug, AgentID: d.Worker.AgentID, Reason: why})
}

// resume lets a paused agent go on where it was.
func (d *Driver) resume(r *running, why string) {
	m := r.meter
	if m.Paused == "" {
		return
	}
	m.Paused = ""
	r.thaw(d.Log)
	if m.Proxy != nil {
		m.Proxy.Resume()
	}
	d.Log.Printf("resumed: %s", why)
	d.state.Paused, d.state.PausedAt = "", look.Stamp{}
	d.save()
	d.Tree.LogEvent(planfs.Event{Event: "resumed", Slug: m.Slug, AgentID: d.Worker.AgentID, Reason: why})
}

// freeze stops every process of the run: its cgroup frozen, where it has
// one (a helper that left the agent's process group cannot SIGCONT it
// back), else its process group stopped.
func (r *running) freeze(log *look.Log) {
	if g := r.box.Group; g != nil {
		err := g.Freeze()
		if err == nil {
			return
		}
		log.Printf("could not freeze the run's cgroup (%v): its process group is stopped instead", err)
	}
	syscall.Kill(-r.pgid, syscall.SIGSTOP)
}

// thaw lets a frozen run go on.
func (r *running) thaw(log *look.Log) {
	if g := r.box.Group; g != nil {
		if err := g.Thaw(); err != nil {
			log.Printf("could not thaw the run's cgroup: %v", err)
		}
	}
	syscall.Kill(-r.pgid, syscall.SIGCONT)
}

// pauseByHand answers the operator's `fleetwatch worker pause|resume`
// (SIGUSR1, SIGUSR2 to the driver).
func (d *Driver) pauseByHand(r *running, sig os.Signal) {
	switch {
	case sig == syscall.SIGUSR1 && r.meter.Paused == "":
		d.pause(r, "paused by the operator")
	case sig == syscall.SIGUSR2 && r.meter.Paused != "":
		if strings.HasPrefix(r.meter.Paused, "budget") {
			d.Log.Printf("resume refused: %s; extend it (fleetwatch budget extend %s --by …) or stop the worker", r.meter.Paused, r.meter.Slug)
			return
		}
		d.resume(r, "resumed by the operator")
	}
}

// parkBlocked parks the run's plan in blocked/ for reason, through the
// claims backend when there is one.
func (d *Driver) parkBlocked(r *running, reason string) Outcome {
	var where string
	var err error
	if d.Keeper != nil {
		where, err = d.Keeper.Park(model.Blocked, reason)
	} else {
		where, err = d.Tree.Park(r.job.Rel, model.Blocked, r.me.Because(reason))
	}
	o := Outcome{Code: -1, Plan: where, Note: reason + "; parked in blocked/"}
	if err != nil {
		o.Plan = d.whereIs(r.job.Rel)
		o.Note = reason + "; could not park " + r.job.Rel + " in blocked/: " + tree.ErrText(err)
	}
	d.Log.Printf("%s", o.Note)
	return o
}
