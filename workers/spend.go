package workers

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/agentfile"
	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/internal/spend"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/contain"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/meter"
	"github.com/fleetwatch/fleetwatch/workers/proc"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// UsageEnv names the file an agent may append its own usage to, as JSON
// lines (meter.Reported).
const UsageEnv = "FLEET_USAGE"

// maxUsageFile bounds $FLEET_USAGE: thousands of lines, each parsed once.
const maxUsageFile = agentfile.Max

// budgetNotice is the share of a budget at which the driver says so once.
const budgetNotice = 0.8

// runMeter counts one run's spend: the proxy's metered calls, and what the
// agent reports of itself on stdout and in $FLEET_USAGE.
type runMeter struct {
	proxy     *meter.Proxy // nil: the endpoint has no base_url
	usageFile *usageFile
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

// usageFile follows $FLEET_USAGE as the agent appends to it: each look
// reads only the whole lines added since the last, so the driver's loop,
// which looks at each heartbeat, parses a long file once, not every time.
type usageFile struct {
	path string

	mu      sync.Mutex
	ino     uint64
	off     int64
	rep     meter.Report
	refused error // why the file was not read, the last time it was not
}

// look reads what was appended since the last look and returns what the
// file reports so far. The agent writes the file: a symlink, a FIFO or a
// device there is refused, never followed or waited on, and a file over
// maxUsageFile counts nothing more.
func (f *usageFile) look() meter.Report {
	f.mu.Lock()
	defer f.mu.Unlock()
	file, st, err := agentfile.Open(f.path, maxUsageFile)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	f.refused = err
	if err != nil {
		return f.rep
	}
	defer file.Close()
	if st.Ino != f.ino || st.Size < f.off {
		// Replaced or cut short: read it again from the start.
		f.ino, f.off, f.rep = st.Ino, 0, meter.Report{}
	}
	data := make([]byte, st.Size-f.off)
	n, _ := file.ReadAt(data, f.off)
	data = data[:n]
	// Whole lines only, and a last line without its newline once it is
	// whole JSON: a line half written now is read when it is done.
	end := bytes.LastIndexByte(data, '\n') + 1
	if rest := bytes.TrimSpace(data[end:]); len(rest) > 0 && json.Valid(rest) {
		end = len(data)
	}
	for _, l := range bytes.Split(data[:end], []byte("\n")) {
		f.rep.Line(l)
	}
	f.off += int64(end)
	return f.rep
}

// why is why the file was not read the last time, nil when it was.
func (f *usageFile) why() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refused
}

// prepare opens the run's box and its meter; the error is the reason the
// run cannot start.
func (d *Driver) prepare(job Job, dir string, ph *proc.Placeholders) (*contain.Box, *runMeter, []string, error) {
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
	if m.proxy != nil {
		bx.ConnectTo(m.proxy.URL())
	}
	return bx, m, env, nil
}

// openMeter starts the run's meter: its proxy, when the endpoint has a
// base_url, in front of the agent's {base_url}.
func (d *Driver) openMeter(job Job, bx *contain.Box, ph *proc.Placeholders) (*runMeter, []string, error) {
	m, env, url, err := newRunMeter(d.BaseURL, bx.Out)
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
	m := &runMeter{usageFile: &usageFile{path: filepath.Join(dir, "usage.jsonl")}, started: time.Now(), spent: make(chan struct{}, 1)}
	env := []string{UsageEnv + "=" + m.usageFile.path}
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
	s, _ := config.Load(project)
	t := x.m.tally(s, r.Model)
	u := t.usage
	r.Model, r.Input, r.Output, r.Cached, r.CostUSD, r.Priced, r.Source = u.Model, u.Input, u.Output, u.Cached, t.spent.USD, t.priced, t.source
	r.NotDaily, r.Estimated = t.notDaily, u.Estimated
	r.Start, r.End, r.Host = x.m.started, time.Now(), look.Hostname()
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
// the proxy saw any call, else what the agent reported (unbounded: tally
// bounds it), else none.
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
	file := m.usageFile.look()
	u, ok := rep.Usage()
	fu, fileOK := file.Usage()
	if !ok && !fileOK {
		return meter.Usage{}, ledger.None
	}
	u.Add(fu)
	return u, ledger.Reported
}

func (m *runMeter) close() {
	if m.proxy != nil {
		m.proxy.Close()
	}
}

// tally is a run's spend, counted once.
type tally struct {
	usage  meter.Usage
	spent  ledger.Totals // tokens, and dollars at the project's prices
	source string        // ledger.Metered, Reported or None
	priced bool
	// notDaily: the agent's report from a run whose proxy saw no call
	// counts against its run's and plan's budgets only (ledger.Run).
	notDaily bool
}

// tally is the run's spend so far at s's prices (a usage naming no model
// is model's): what its proxy metered, else what the agent reported held
// to `budgets: reported_max`, tokens and dollars both.
func (m *runMeter) tally(s config.Settings, model string) tally {
	u, src := m.usage()
	if u.Model == "" {
		u.Model = model
	}
	bound := s.Budgets.ReportedMax()
	if src == ledger.Reported {
		u = u.Bounded(bound.Tokens, bound.USD)
	}
	cost, priced := ledger.Priced(u, pricesOf(s))
	if src == ledger.Reported {
		cost = min(cost, bound.USD) // its tokens at the model's price, too
	}
	return tally{usage: u, spent: ledger.Totals{Tokens: u.Tokens(), USD: cost}, source: src, priced: priced,
		notDaily: src == ledger.Reported && m.proxy != nil}
}

// usageRefused is why $FLEET_USAGE could not be read, nil when it could.
func (m *runMeter) usageRefused() error { return m.usageFile.why() }

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
	t := m.tally(d.settings, d.Worker.Model)
	if err := m.usageRefused(); err != nil {
		d.Log.Printf("the agent's usage file is not read: %v", err)
	}
	u := t.usage
	run := ledger.Run{
		ID: r.job.RunID, Plan: m.slug, Agent: d.Worker.AgentID, Tier: d.Worker.Tier.String(), Endpoint: d.Endpoint,
		Model: u.Model, Host: look.Hostname(), Input: u.Input, Output: u.Output, Cached: u.Cached, CostUSD: t.spent.USD,
		Priced: t.priced, Source: t.source, Start: m.started, End: time.Now(), Exit: o.Code,
		Mode: cmp.Or(r.job.Mode, proc.ModeBuild), Claim: d.claimOf(r), Committed: r.startTip != "" && branchTip(r.job.Worktree) != r.startTip,
		NotDaily: t.notDaily, Estimated: u.Estimated, Session: r.result.Result().Session,
	}
	if run.ID == "" {
		run.ID = fmt.Sprintf("%s-%d", d.Worker.AgentID, m.started.UnixNano())
	}
	if err := ledger.Append(d.Tree.Project, run); err != nil {
		d.Log.Printf("%v", err)
		return
	}
	if u.Estimated > 0 {
		d.Log.Printf("spent %s (%s; %d of %d calls answered with no usage that could be read, estimated from their bytes)", t.spent, t.source, u.Estimated, u.Calls)
		return
	}
	d.Log.Printf("spent %s (%s)", t.spent, t.source)
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
	t := r.meter.tally(d.settings, d.Worker.Model).spent
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

// pause stops the agent where it is: every process of its run frozen, its
// proxy holding requests. The lease is kept alive and nothing is lost.
func (d *Driver) pause(r *running, why string) {
	m := r.meter
	m.paused = why
	if m.proxy != nil {
		m.proxy.Pause()
	}
	r.freeze(d.Log)
	d.Log.Printf("paused: %s", why)
	d.state.Paused, d.state.PausedAt = why, look.Stamp{Time: d.Tree.Now()}
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
	r.thaw(d.Log)
	if m.proxy != nil {
		m.proxy.Resume()
	}
	d.Log.Printf("resumed: %s", why)
	d.state.Paused, d.state.PausedAt = "", look.Stamp{}
	d.save()
	d.Tree.LogEvent(planfs.Event{Event: "resumed", Slug: m.slug, AgentID: d.Worker.AgentID, Reason: why})
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
		o.Note = reason + "; could not park " + r.job.Rel + " in blocked/: " + tree.ErrText(err)
	}
	d.Log.Printf("%s", o.Note)
	return o
}
