package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/agentfile"
	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/spend"
	"github.com/fleetwatch/fleetwatch/workers/meter"
)

// UsageEnv names the file an agent may append its own usage to, as JSON
// lines (meter.Reported).
const UsageEnv = "FLEET_USAGE"

// maxUsageFile bounds $FLEET_USAGE: thousands of lines, each parsed once.
const maxUsageFile = agentfile.Max

// RunMeter counts one run's spend: the proxy's metered calls, and what the
// agent reports of itself on stdout and in $FLEET_USAGE.
type RunMeter struct {
	Proxy     *meter.Proxy // nil: the endpoint has no base_url
	usageFile *UsageFile
	Started   time.Time
	Slug      string
	Budget    spend.Limit // the plan header's, over budgets: plan
	Before    Totals

	// Spent is nudged after each metered call, so a budget is weighed
	// at once rather than at the next heartbeat.
	Spent chan struct{}

	Mu     sync.Mutex
	Rep    meter.Report
	Tail   []byte // the end of the agent's stdout, for its ## Result
	Said   bool   // the 80 % notice
	Paused string // why the run is paused ("" when it is not)
}

// UsageFile follows $FLEET_USAGE as the agent appends to it: each look
// reads only the whole lines added since the last, so the driver's loop,
// which looks at each heartbeat, parses a long file once, not every time.
type UsageFile struct {
	Path string

	mu      sync.Mutex
	ino     uint64
	off     int64
	rep     meter.Report
	refused error // why the file was not read, the last time it was not
}

// Look reads what was appended since the last look and returns what the
// file reports so far. The agent writes the file: a symlink, a FIFO or a
// device there is refused, never followed or waited on, and a file over
// maxUsageFile counts nothing more.
func (f *UsageFile) Look() meter.Report {
	f.mu.Lock()
	defer f.mu.Unlock()
	file, st, err := agentfile.Open(f.Path, maxUsageFile)
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

// Why is why the file was not read the last time, nil when it was.
func (f *UsageFile) Why() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refused
}

// NewRunMeter is a run's meter with $FLEET_USAGE in dir (a folder only
// the run writes) and, for a baseURL, a proxy in front of it: the env the
// agent gets and the base_url it is told.
func NewRunMeter(baseURL, dir string) (*RunMeter, []string, string, error) {
	m := &RunMeter{usageFile: &UsageFile{Path: filepath.Join(dir, "usage.jsonl")}, Started: time.Now(), Spent: make(chan struct{}, 1)}
	env := []string{UsageEnv + "=" + m.usageFile.Path}
	if baseURL == "" {
		return m, env, "", nil
	}
	p, err := meter.Start(baseURL, func(meter.Usage) {
		select {
		case m.Spent <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return nil, nil, "", err
	}
	m.Proxy = p
	return m, append(env, "OPENAI_BASE_URL="+p.URL(), "ANTHROPIC_BASE_URL="+p.URL()), p.URL(), nil
}

// Record closes the meter of a run outside a driver (a peer review) and
// appends r to project's ledger with what the run spent (its proxy's
// count, else what stdout and $FLEET_USAGE report) at the project's
// prices, as a driver's runs are recorded. r names its host (the ledger
// sits below the state files that say which host this is).
func (x *RunMeter) Record(project string, r Run, stdout []byte) error {
	x.Close()
	for _, line := range bytes.Split(stdout, []byte("\n")) {
		x.Rep.Line(line)
	}
	s, _ := config.Load(project)
	t := x.Tally(s, r.Model)
	u := t.Usage
	r.Model, r.Input, r.Output, r.Cached, r.CostUSD, r.Priced, r.Source = u.Model, u.Input, u.Output, u.Cached, t.Spent.USD, t.Priced, t.Source
	r.NotDaily, r.Estimated = t.NotDaily, u.Estimated
	r.Start, r.End = x.Started, time.Now()
	if r.ID == "" {
		r.ID = fmt.Sprintf("%s-%d", r.Agent, r.Start.UnixNano())
	}
	return Append(project, r)
}

// Line reads one line of the agent's stdout.
func (m *RunMeter) Line(s string) {
	m.Mu.Lock()
	defer m.Mu.Unlock()
	m.Rep.Line([]byte(s))
	m.Tail = append(m.Tail, s...)
	m.Tail = append(m.Tail, '\n')
	if n := len(m.Tail); n > 64<<10 {
		m.Tail = m.Tail[n-32<<10:]
	}
}

// usage is the run's spend so far and where it came from: metered when
// the proxy saw any call, else what the agent reported (unbounded: tally
// bounds it), else none.
func (m *RunMeter) usage() (meter.Usage, string) {
	var metered meter.Usage
	if m.Proxy != nil {
		metered = m.Proxy.Usage()
	}
	if metered.Calls > 0 {
		return metered, Metered
	}
	m.Mu.Lock()
	rep := m.Rep
	m.Mu.Unlock()
	file := m.usageFile.Look()
	u, ok := rep.Usage()
	fu, fileOK := file.Usage()
	if !ok && !fileOK {
		return meter.Usage{}, None
	}
	u.Add(fu)
	return u, Reported
}

// Close stops the meter's proxy, when it has one.
func (m *RunMeter) Close() {
	if m.Proxy != nil {
		m.Proxy.Close()
	}
}

// tally is a run's spend, counted once.
type tally struct {
	Usage  meter.Usage
	Spent  Totals // tokens, and dollars at the project's prices
	Source string // ledger.Metered, Reported or None
	Priced bool
	// notDaily: the agent's report from a run whose proxy saw no call
	// counts against its run's and plan's budgets only (ledger.Run).
	NotDaily bool
}

// Tally is the run's spend so far at s's prices (a usage naming no model
// is model's): what its proxy metered, else what the agent reported held
// to `budgets: reported_max`, tokens and dollars both.
func (m *RunMeter) Tally(s config.Settings, model string) tally {
	u, src := m.usage()
	if u.Model == "" {
		u.Model = model
	}
	bound := s.Budgets.ReportedMax()
	if src == Reported {
		u = u.Bounded(bound.Tokens, bound.USD)
	}
	cost, priced := Priced(u, pricesOf(s))
	if src == Reported {
		cost = min(cost, bound.USD) // its tokens at the model's price, too
	}
	return tally{Usage: u, Spent: Totals{Tokens: u.Tokens(), USD: cost}, Source: src, Priced: priced,
		NotDaily: src == Reported && m.Proxy != nil}
}

// UsageRefused is why $FLEET_USAGE could not be read, nil when it could.
func (m *RunMeter) UsageRefused() error { return m.usageFile.Why() }

// pricesOf are the settings' prices: as the meter counts them.
func pricesOf(s config.Settings) map[string]meter.Price {
	out := make(map[string]meter.Price, len(s.Prices))
	for k, p := range s.Prices {
		out[k] = meter.Price{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead}
	}
	return out
}
