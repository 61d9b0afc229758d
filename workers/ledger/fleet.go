package ledger

import (
	"maps"
	"slices"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/spend"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// Gauge is one budget beside what has been spent against it.
type Gauge struct {
	What  string      `json:"what"` // "fleet today", "endpoint claude today", "tier mid today"
	Limit spend.Limit `json:"limit"`
	Spent Totals      `json:"spent"`
}

// Share is how much of the budget is spent (1 = all of it).
func (g Gauge) Share() float64 { return g.Spent.Fraction(g.Limit) }

// Fleet is what the cockpit's Fleet pane shows: today's spend against
// each daily budget, and each tier's runs and landings over the window.
type Fleet struct {
	Today  Totals  `json:"today"` // the whole fleet's spend today
	Gauges []Gauge `json:"gauges"`
	Tiers  []Line  `json:"tiers"` // outcomes per tier since Since
	// Endpoints is each endpoint's spend today, by name.
	Endpoints map[string]Totals `json:"endpoints,omitempty"`
	Since     time.Time
	Problem   string `json:"problem,omitempty"` // why claims are stopped for the whole fleet, "" when they are not
}

// fleetEvents bounds the event log's tail the Fleet pane reads, on every
// worker's heartbeat: a week of a busy fleet's events. `fleetwatch report`
// reads the whole log.
const fleetEvents = 20_000

// ReadFleet reads project's settings, ledger and event log for the Fleet
// pane: today's budgets and spend, and the tiers' outcomes over the last
// week.
func ReadFleet(t *planfs.Tree, now time.Time) (Fleet, error) {
	s, err := config.Load(t.Project)
	if err != nil {
		return Fleet{}, err
	}
	spent, err := ReadToday(t.Project, now)
	if err != nil {
		return Fleet{}, err
	}
	f := Fleet{Today: spent.FleetDay, Since: now.AddDate(0, 0, -7), Endpoints: spent.EndpointDay}
	b := s.Budgets
	if !b.FleetDay.None() {
		f.Gauges = append(f.Gauges, Gauge{"fleet today", b.FleetDay, spent.FleetDay})
		if spent.FleetDay.Fraction(b.FleetDay) >= 1 {
			f.Problem = DayProblem(config.Budgets{FleetDay: b.FleetDay}, spent, "", "")
		}
	}
	for _, n := range slices.Sorted(maps.Keys(b.EndpointDay)) {
		f.Gauges = append(f.Gauges, Gauge{"endpoint " + n + " today", b.EndpointDay[n], spent.EndpointDay[n]})
	}
	for _, n := range slices.Sorted(maps.Keys(b.TierDay)) {
		f.Gauges = append(f.Gauges, Gauge{"tier " + n + " today", b.TierDay[n], spent.TierDay[n]})
	}
	events, err := t.RecentEvents(fleetEvents)
	if err != nil {
		return f, err
	}
	slices.Reverse(events) // newest first; outcomes read them in order
	o := NewOutcomes(events, "tier")
	if err := readRecent(t.Project, f.Since, o.Add); err != nil { // a week from the tail, not the whole ledger
		return f, err
	}
	f.Tiers = o.Lines()
	return f, nil
}
