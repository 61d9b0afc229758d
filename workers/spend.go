package workers

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"fleetwatch/internal/config"
	"fleetwatch/internal/safepath"
	"fleetwatch/internal/spend"
	"fleetwatch/model"
	"fleetwatch/planfs"
	"fleetwatch/workers/ledger"
	"fleetwatch/workers/meter"
)

// UsageEnv names the file an agent may append its own usage to, as JSON
// lines (meter.Reported).
const UsageEnv = "FLEET_USAGE"

// maxUsageFile bounds how much of $FLEET_USAGE is read.
const maxUsageFile = 4 << 20

// budgetNotice is the share of a budget at which the driver says so once.
const budgetNotice = 0.8

// runMeter counts one run's spend: the proxy's metered calls, and what the
// agent reports of itself on stdout and in $FLEET_USAGE.
type runMeter struct {
	proxy     *meter.Proxy // nil: the endpoint has no base_url
	usageFile string
	started   time.Time
	slug      string
	budget    spend.Limit // the plan header's, over budgets: plan
	before    ledger.Totals

	// spent is nudged after each metered call, so a budget is weighed
	// at once rather than at the next heartbeat.
	spent chan struct{}

	mu     sync.Mutex
	rep    meter.Report
	tail   []byte // the end of the agent's stdout, for its ## Result
	said   bool   // the 80 % notice
	paused string // why the run is paused ("" when it is not)
}

// prepare opens the run's box and its meter; the error is the reason the
// run cannot start.
func (d *Driver) prepare(job Job, dir string, ph *Placeholders) (*box, *runMeter, []string, error) {
	bx, err := d.openBox(job, dir)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("cannot prepare the agent's sandbox: %s", errText(err))
	}
	if bx.proposal != "" {
		ph.Proposal = bx.proposal
	}
	m, env, err := d.openMeter(job, bx, ph)
	if err != nil {
		bx.close()
		return nil, nil, nil, fmt.Errorf("cannot start the run's metering proxy: %s", errText(err))
	}
	if m.proxy != nil {
		bx.connectTo(m.proxy.URL())
	}
	return bx, m, env, nil
}

// openMeter starts the run's meter: its proxy, when the endpoint has a
// base_url, in front of the agent's {base_url}.
func (d *Driver) openMeter(job Job, bx *box, ph *Placeholders) (*runMeter, []string, error) {
	m, env, url, err := newRunMeter(d.BaseURL, bx.out)
	if err != nil {
		return nil, nil, err
	}
	m.slug = model.SlugOf(path.Base(job.Rel))
	m.budget = planBudget(job, d.Tree)
	if spent, err := ledger.ReadSpent(d.Tree.Project, time.Now()); err == nil {
		m.before = spent.Plan[m.slug]
	} else {
		d.Log.Printf("usage ledger: %v", err)
	}
	ph.BaseURL = url
	return m, env, nil
}

// newRunMeter is a run's meter with $FLEET_USAGE in dir (a folder only
// the run writes) and, for a baseURL, a proxy in front of it: the env the
// agent gets and the base_url it is told.
func newRunMeter(baseURL, dir string) (*runMeter, []string, string, error) {
	m := &runMeter{usageFile: filepath.Join(dir, "usage.jsonl"), started: time.Now(), spent: make(chan struct{}, 1)}
	env := []string{UsageEnv + "=" + m.usageFile}
	if baseURL == "" {
		return m, env, "", nil
	}
	p, err := meter.Start(baseURL, func(meter.Usage) {
		select {
		case m.spent <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return nil, nil, "", err
	}
	m.proxy = p
	return m, append(env, "OPENAI_BASE_URL="+p.URL(), "ANTHROPIC_BASE_URL="+p.URL()), p.URL(), nil
}

// Metered is a run outside a driver, a peer review, metered as a driver's
// runs are and recorded in the same ledger.
type Metered struct{ m *runMeter }

// Meter starts a run's meter (newRunMeter): the agent's environment and
// the base_url to give it in place of baseURL.
func Meter(baseURL, dir string) (*Metered, []string, string, error) {
	m, env, url, err := newRunMeter(baseURL, dir)
	if err != nil {
		return nil, nil, "", err
	}
	return &Metered{m}, env, url, nil
}

// Record closes the meter and appends r to project's ledger with what the
// run spent (its proxy's count, else what stdout and $FLEET_USAGE report)
// at the project's prices.
func (x *Metered) Record(project string, r Run, stdout []byte) error {
	x.m.close()
	for _, line := range bytes.Split(stdout, []byte("\n")) {
		x.m.rep.Line(line)
	}
	u, src := x.m.usage()
	s, _ := config.Load(project)
	if u.Model == "" {
		u.Model = r.Model
	}
	cost, priced := ledger.Priced(u, pricesOf(s))
	r.Model, r.Input, r.Output, r.Cached, r.CostUSD, r.Priced, r.Source = u.Model, u.Input, u.Output, u.Cached, cost, priced, src
	r.Start, r.End, r.Host = x.m.started, time.Now(), hostname()
	if r.ID == "" {
		r.ID = fmt.Sprintf("%s-%d", r.Agent, r.Start.UnixNano())
	}
	return ledger.Append(project, r)
}

// Run is one ledger record (ledger.Run), for callers of Meter.
type Run = ledger.Run

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

// line reads one line of the agent's stdout.
func (m *runMeter) line(s string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rep.Line([]byte(s))
	m.tail = append(m.tail, s...)
	m.tail = append(m.tail, '\n')
	if n := len(m.tail); n > 64<<10 {
		m.tail = m.tail[n-32<<10:]
	}
}

// usage is the run's spend so far and where it came from: metered when
// the proxy saw any call, else what the agent reported, else none.
func (m *runMeter) usage() (meter.Usage, string) {
	var metered meter.Usage
	if m.proxy != nil {
		metered = m.proxy.Usage()
	}
	if metered.Calls > 0 {
		return metered, ledger.Metered
	}
	m.mu.Lock()
	rep := m.rep
	m.mu.Unlock()
	// The agent writes $FLEET_USAGE: a symlink or a FIFO there is refused,
	// never followed or waited on.
	if f, err := safepath.OpenFile(filepath.Dir(m.usageFile), filepath.Base(m.usageFile), os.O_RDONLY, 0); err == nil {
		data, _ := io.ReadAll(io.LimitReader(f, maxUsageFile))
		f.Close()
		for _, l := range bytes.Split(data, []byte("\n")) {
			rep.Line(l)
		}
	}
	if u, ok := rep.Usage(); ok {
		return u, ledger.Reported
	}
	return meter.Usage{}, ledger.None
}

func (m *runMeter) close() {
	if m.proxy != nil {
		m.proxy.Close()
	}
}

// spentNow is the run's spend in tokens and dollars at the project's
// prices.
func (d *Driver) spentNow(m *runMeter) (ledger.Totals, meter.Usage, string, bool) {
	u, src := m.usage()
	if u.Model == "" {
		u.Model = d.Worker.Model
	}
	cost, priced := ledger.Priced(u, d.prices())
	return ledger.Totals{Tokens: u.Tokens(), USD: cost}, u, src, priced
}

func (d *Driver) prices() map[string]meter.Price { return pricesOf(d.settings) }

// pricesOf are the settings' prices: as the meter counts them.
func pricesOf(s config.Settings) map[string]meter.Price {
	out := make(map[string]meter.Price, len(s.Prices))
	for k, p := range s.Prices {
		out[k] = meter.Price{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead}
	}
	return out
}

// recordRun appends the run's record to the ledger, where agents cannot
// write.
func (d *Driver) recordRun(r *running, o Outcome) {
	m := r.meter
	t, u, src, priced := d.spentNow(m)
	run := ledger.Run{
		ID: r.job.RunID, Plan: m.slug, Agent: d.Worker.AgentID, Tier: d.Worker.Tier.String(), Endpoint: d.Endpoint,
		Model: u.Model, Host: hostname(), Input: u.Input, Output: u.Output, Cached: u.Cached, CostUSD: t.USD,
		Priced: priced, Source: src, Start: m.started, End: time.Now(), Exit: o.Code,
		Mode: cmp.Or(r.job.Mode, ModeBuild), Claim: d.claimOf(r), Committed: r.startTip != "" && branchTip(r.job.Worktree) != r.startTip,
	}
	if run.ID == "" {
		run.ID = fmt.Sprintf("%s-%d", d.Worker.AgentID, m.started.UnixNano())
	}
	if err := ledger.Append(d.Tree.Project, run); err != nil {
		d.Log.Printf("%v", err)
		return
	}
	d.Log.Printf("spent %s (%s)", t, src)
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
	r.meter.mu.Lock()
	defer r.meter.mu.Unlock()
	if c := ledger.ParseResult(r.meter.rep.Text()); c != "" {
		return c
	}
	return ledger.ParseResult(string(r.meter.tail))
}

// limits are the run's and the plan's budgets as they stand, the
// operator's extensions added.
func (d *Driver) limits(m *runMeter) (run, plan spend.Limit) {
	ext, err := ledger.Extended(d.Tree.Project, m.slug)
	if err != nil {
		d.Log.Printf("%v", err)
	}
	plan = d.settings.Budgets.Plan
	if !m.budget.None() {
		plan = m.budget
	}
	return ledger.Raise(d.settings.Budgets.Run, ext), ledger.Raise(plan, ext)
}

// weigh reads the run's spend once, for the state file and against its
// budgets.
func (d *Driver) weigh(r *running) {
	t, _, _, _ := d.spentNow(r.meter)
	d.state.Spent = t
	d.budgetTick(r, t)
}

// budgetTick weighs the run's spend t against its budgets: a notice at
// 80 %, a pause at 100 %, and a paused run resumed once its budget was
// raised past what it spent.
func (d *Driver) budgetTick(r *running, t ledger.Totals) {
	m := r.meter
	if d.settings.Budgets.Run.None() && d.settings.Budgets.Plan.None() && m.budget.None() {
		return // no budget: no extension to read either
	}
	runLimit, planLimit := d.limits(m)
	frac, what, limit := t.Fraction(runLimit), "the run's budget", runLimit
	if f := m.before.Plus(t).Fraction(planLimit); f > frac {
		frac, what, limit = f, "the plan's budget", planLimit
	}
	switch {
	case frac >= 1 && m.paused == "":
		d.pause(r, fmt.Sprintf("budget reached: %s (%s) spent: %s this run, %s on the plan", what, limit, t, m.before.Plus(t)))
	case frac < 1 && strings.HasPrefix(m.paused, "budget"):
		d.resume(r, "its budget was extended to "+limit.String())
	case frac >= budgetNotice && !m.said:
		m.said = true
		d.Log.Printf("%.0f %% of %s (%s) spent: %s", 100*frac, what, limit, t)
		d.Tree.LogEvent(planfs.Event{Event: "budget-notice", Slug: m.slug, AgentID: d.Worker.AgentID,
			Reason: fmt.Sprintf("%.0f %% of %s (%s)", 100*frac, what, limit)})
	}
}

// pause stops the agent where it is: its process group stopped, its
// proxy holding requests. The lease is kept alive and nothing is lost.
func (d *Driver) pause(r *running, why string) {
	m := r.meter
	m.paused = why
	if m.proxy != nil {
		m.proxy.Pause()
	}
	syscall.Kill(-r.pgid, syscall.SIGSTOP)
	d.Log.Printf("paused: %s", why)
	d.state.Paused, d.state.PausedAt = why, Stamp{d.Tree.Now()}
	d.save()
	d.Tree.LogEvent(planfs.Event{Event: "paused", Slug: m.slug, AgentID: d.Worker.AgentID, Reason: why})
}

// resume lets a paused agent go on where it was.
func (d *Driver) resume(r *running, why string) {
	m := r.meter
	if m.paused == "" {
		return
	}
	m.paused = ""
	syscall.Kill(-r.pgid, syscall.SIGCONT)
	if m.proxy != nil {
		m.proxy.Resume()
	}
	d.Log.Printf("resumed: %s", why)
	d.state.Paused, d.state.PausedAt = "", Stamp{}
	d.save()
	d.Tree.LogEvent(planfs.Event{Event: "resumed", Slug: m.slug, AgentID: d.Worker.AgentID, Reason: why})
}

// PausedRuns are the runs of project's workers paused where they are
// (at their budget, or by hand), for the inbox: each waits for a person.
func PausedRuns(project string) []State {
	states, _ := ReadStates(project)
	var out []State
	now := time.Now()
	for _, st := range states {
		// A driver that died paused left its plan to its lease, not to a person.
		if st.State == StateRunning && st.Paused != "" && st.Health(now) != Dead {
			out = append(out, st)
		}
	}
	return out
}

// pauseByHand answers the operator's `fleetwatch worker pause|resume`
// (SIGUSR1, SIGUSR2 to the driver).
func (d *Driver) pauseByHand(r *running, sig os.Signal) {
	switch {
	case sig == syscall.SIGUSR1 && r.meter.paused == "":
		d.pause(r, "paused by the operator")
	case sig == syscall.SIGUSR2 && r.meter.paused != "":
		if strings.HasPrefix(r.meter.paused, "budget") {
			d.Log.Printf("resume refused: %s; extend it (fleetwatch budget extend %s --by …) or stop the worker", r.meter.paused, r.meter.slug)
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
		o.Note = reason + "; could not park " + r.job.Rel + " in blocked/: " + errText(err)
	}
	d.Log.Printf("%s", o.Note)
	return o
}

// BoardProblems are the warnings every face's board shows beside the
// tree's own: symlinks under var/ (SymlinkProblems) and each daily budget
// spent today, under which claims stop.
func BoardProblems(project string) []model.Warning {
	return append(SymlinkProblems(project), ledger.SpentBudgets(project, time.Now())...)
}
