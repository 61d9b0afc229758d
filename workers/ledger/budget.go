package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/internal/spend"
	"github.com/fleetwatch/fleetwatch/model"
)

// ExtensionsFile holds the operator's budget extensions, one per line.
const ExtensionsFile = "var/fleet/usage/extensions.jsonl"

// Totals are tokens and dollars spent.
type Totals struct {
	Tokens int64   `json:"tokens"`
	USD    float64 `json:"usd"`
}

func (t *Totals) add(r Run) {
	t.Tokens += r.Tokens()
	t.USD += r.CostUSD
}

// Plus is t and o together.
func (t Totals) Plus(o Totals) Totals { return Totals{t.Tokens + o.Tokens, t.USD + o.USD} }

// Fraction is how much of l t has used: the larger of its tokens' and its
// dollars' share; 0 when l limits nothing.
func (t Totals) Fraction(l spend.Limit) float64 {
	f := 0.0
	if l.Tokens > 0 {
		f = float64(t.Tokens) / float64(l.Tokens)
	}
	if l.USD > 0 {
		f = max(f, t.USD/l.USD)
	}
	return f
}

// String is t as "1.2M tokens, $3.40".
func (t Totals) String() string {
	return fmt.Sprintf("%s tokens, $%.2f", spend.FormatTokens(t.Tokens), t.USD)
}

// Spent is what the ledger holds against the budgets: each plan's runs
// over all time, and today's by endpoint, by tier and for the fleet (a
// run marked NotDaily counts for its plan only).
type Spent struct {
	Plan        map[string]Totals
	EndpointDay map[string]Totals
	TierDay     map[string]Totals
	FleetDay    Totals
}

// ReadSpent sums project's ledger for the budgets, "today" being now's
// local day.
func ReadSpent(project string, now time.Time) (Spent, error) {
	s := Spent{Plan: map[string]Totals{}, EndpointDay: map[string]Totals{}, TierDay: map[string]Totals{}}
	y, m, d := now.Date()
	midnight := time.Date(y, m, d, 0, 0, 0, 0, now.Location())
	_, err := Read(project, time.Time{}, func(r Run) {
		p := s.Plan[r.Plan]
		p.add(r)
		s.Plan[r.Plan] = p
		if r.End.Before(midnight) || r.NotDaily {
			return
		}
		e, t := s.EndpointDay[r.Endpoint], s.TierDay[r.Tier]
		e.add(r)
		t.add(r)
		s.EndpointDay[r.Endpoint], s.TierDay[r.Tier] = e, t
		s.FleetDay.add(r)
	})
	return s, err
}

// DayProblem says why a worker on endpoint at tier may not claim today,
// "" when it may: a spent daily budget of its endpoint, its tier or the
// fleet stops new claims until the next day or a raised budget.
func DayProblem(b config.Budgets, s Spent, endpoint, tier string) string {
	for _, c := range []struct {
		what  string
		limit spend.Limit
		spent Totals
	}{
		{"the fleet's daily budget", b.FleetDay, s.FleetDay},
		{"endpoint " + endpoint + "'s daily budget", b.EndpointDay[endpoint], s.EndpointDay[endpoint]},
		{"tier " + tier + "'s daily budget", b.TierDay[tier], s.TierDay[tier]},
	} {
		if !c.limit.None() && c.spent.Fraction(c.limit) >= 1 {
			return fmt.Sprintf("%s (%s) is spent: %s today; claims resume tomorrow or when budgets: in fleetwatch.yaml is raised", c.what, c.limit, c.spent)
		}
	}
	return ""
}

// Extension is an operator's raise of one plan's budget, its runs' and
// its own: `fleetwatch budget extend SLUG --by 1M`.
type Extension struct {
	Plan   string    `json:"plan"`
	Tokens int64     `json:"tokens,omitempty"`
	USD    float64   `json:"usd,omitempty"`
	By     string    `json:"by"`
	At     time.Time `json:"at"`
}

// Extend records e.
func Extend(project string, e Extension) error {
	if e.Plan == "" || (e.Tokens <= 0 && e.USD <= 0) {
		return errors.New("budget extension: want a plan and tokens or dollars above 0")
	}
	// The budget is the agent's circuit breaker: a person raises it, never
	// a process an agent started, however its environment was cleaned.
	if why := sandbox.AgentRun(); why != "" {
		return fmt.Errorf("budget extend %s: refused: a person extends a budget, and %s", e.Plan, why)
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	f, err := safepath.OpenFile(project, ExtensionsFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("budget extension: %w", err)
	}
	defer f.Close()
	_, err = f.Write(append(line, '\n'))
	return err
}

// Extended is what the operator has added to plan's budget so far.
func Extended(project, plan string) (spend.Limit, error) {
	var l spend.Limit
	data, err := readBounded(project, ExtensionsFile, 4<<20)
	if errors.Is(err, os.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return l, fmt.Errorf("budget extensions: %w", err)
	}
	for _, line := range splitLines(data) {
		var e Extension
		if json.Unmarshal(line, &e) != nil || e.Plan != plan {
			continue
		}
		l.Tokens += max(e.Tokens, 0)
		l.USD += max(e.USD, 0)
	}
	return l, nil
}

// Raise is l with ext added to whichever limits l sets (an extension of
// a kind l does not limit is no limit to raise).
func Raise(l, ext spend.Limit) spend.Limit {
	if l.Tokens > 0 {
		l.Tokens += ext.Tokens
	}
	if l.USD > 0 {
		l.USD += ext.USD
	}
	return l
}

func readBounded(project, rel string, limit int64) ([]byte, error) {
	f, err := safepath.OpenFile(project, rel, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(data)) > limit {
		err = fmt.Errorf("%s: larger than %d bytes", rel, limit)
	}
	return data, err
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := slices.Index(b, '\n')
		if i < 0 {
			return append(out, b)
		}
		out = append(out, b[:i])
		b = b[i+1:]
	}
	return out
}

// tailMargin is how far before since a tail read keeps going: records are
// appended as runs end, on clocks of several machines, so the file is in
// end order only about.
const tailMargin = time.Hour

// readRecent calls fn with the runs that ended at or after since, reading
// the ledger from its end back only as far as it must: a day's runs out of
// a year's ledger cost a day's reading.
func readRecent(project string, since time.Time, fn func(Run)) error {
	f, err := safepath.OpenFile(project, File, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("usage ledger: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("usage ledger: %w", err)
	}
	for window := int64(256 << 10); ; window *= 4 {
		from := max(fi.Size()-window, 0)
		runs, oldest, err := runsSince(io.NewSectionReader(f, from, fi.Size()-from), since)
		if err != nil {
			return err
		}
		if from == 0 || (!oldest.IsZero() && oldest.Before(since.Add(-tailMargin))) {
			for _, r := range runs {
				fn(r)
			}
			return nil
		}
	}
}

// runsSince are the runs in r that ended at or after since, and the
// oldest end of any run in it.
func runsSince(r io.Reader, since time.Time) (runs []Run, oldest time.Time, err error) {
	_, err = scan(r, time.Time{}, func(run Run) {
		if oldest.IsZero() || run.End.Before(oldest) {
			oldest = run.End
		}
		if !run.End.Before(since) {
			runs = append(runs, run)
		}
	})
	return runs, oldest, err
}

// ReadToday sums today's runs (now's local day) by endpoint, tier and
// fleet, reading only the ledger's tail; Plan is left empty.
func ReadToday(project string, now time.Time) (Spent, error) {
	s := Spent{EndpointDay: map[string]Totals{}, TierDay: map[string]Totals{}}
	y, m, d := now.Date()
	err := readRecent(project, time.Date(y, m, d, 0, 0, 0, 0, now.Location()), func(r Run) {
		if r.NotDaily {
			return
		}
		e, t := s.EndpointDay[r.Endpoint], s.TierDay[r.Tier]
		e.add(r)
		t.add(r)
		s.EndpointDay[r.Endpoint], s.TierDay[r.Tier] = e, t
		s.FleetDay.add(r)
	})
	return s, err
}

// SpentBudgets are a warning for each daily budget of project that is
// spent today, for every face to show: claims under it stop until the next
// day or a raised budget. None when no daily budget is set.
func SpentBudgets(project string, now time.Time) []model.Warning {
	s, err := config.Load(project)
	if err != nil {
		return nil // the settings' own error is said where they are read
	}
	b := s.Budgets
	if b.FleetDay.None() && len(b.EndpointDay) == 0 && len(b.TierDay) == 0 {
		return nil
	}
	spent, err := ReadToday(project, now)
	if err != nil {
		return []model.Warning{{File: File, Message: err.Error()}}
	}
	var out []model.Warning
	say := func(what string, l spend.Limit, t Totals) {
		if !l.None() && t.Fraction(l) >= 1 {
			out = append(out, model.Warning{File: config.File, Line: b.Line,
				Message: fmt.Sprintf("%s (%s) is spent: %s today; its claims stop until tomorrow or a raised budget", what, l, t)})
		}
	}
	say("the fleet's daily budget", b.FleetDay, spent.FleetDay)
	for _, n := range slices.Sorted(maps.Keys(b.EndpointDay)) {
		say("endpoint "+n+"'s daily budget", b.EndpointDay[n], spent.EndpointDay[n])
	}
	for _, n := range slices.Sorted(maps.Keys(b.TierDay)) {
		say("tier "+n+"'s daily budget", b.TierDay[n], spent.TierDay[n])
	}
	return out
}
