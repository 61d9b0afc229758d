package claims

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
)

// Run is one run as the caps (fleetwatch.yaml's limits:) count it: the
// host it runs on and what it runs as. A lease that names no host, tier,
// endpoint or provider (anchor's; older fleetwatch's name only the host)
// counts under no cap of that kind, only the fleet's.
type Run struct {
	Host string
	model.RunsAs
}

// RunOf is the run l stands for.
func RunOf(l *model.Lease) Run { return Run{Host: l.Host, RunsAs: l.RunsAs} }

// name is r's name under a cap of kind.
func (r Run) name(kind string) string {
	switch kind {
	case config.CapHost:
		return r.Host
	case config.CapEndpoint:
		return r.Endpoint
	case config.CapProvider:
		return r.Provider
	case config.CapTier:
		return r.Tier
	}
	return ""
}

// Runs are the leases of a backend's view that count as runs: live by
// the backend's rule, readable, and not held by the coordinator's inbox (a
// plan waiting for approval or its resume runs nothing).
func Runs(leases []Remote) []Run {
	var out []Run
	for i := range leases {
		if l := &leases[i]; l.Live && l.Corrupt == "" && l.Awaiting == "" {
			out = append(out, RunOf(&l.Lease))
		}
	}
	return out
}

// BoardRuns are Runs as a board's leases show them (the lease files, or a
// remote view overlaid): active at now, on a plan in in-progress/ (a
// lease on a ready path is a claim on its way, counted once it lands).
func BoardRuns(leases []model.Lease, now float64) []Run {
	var out []Run
	for i := range leases {
		l := &leases[i]
		if l.Awaiting == "" && l.Active(now) && model.Rel(l.Rel).Lane() == model.InProgress {
			out = append(out, RunOf(l))
		}
	}
	return out
}

// FleetCap is the Kind of the whole fleet's cap.
const FleetCap = "fleet"

// CapCount is one cap and how many runs count under it.
type CapCount struct {
	Kind, Name string // Kind is FleetCap (Name "") or one of config.CapKinds
	Runs, Max  int
}

// Full reports whether one more run would exceed the cap.
func (c CapCount) Full() bool { return c.Runs >= c.Max }

// Over reports whether the cap is exceeded.
func (c CapCount) Over() bool { return c.Runs > c.Max }

// String is how every face names the cap: "limits: endpoint claude has
// 3 of 3 live runs". A name from another machine's lease is made safe
// for a terminal and cut to 64 characters.
func (c CapCount) String() string {
	what := "the fleet"
	if c.Kind != FleetCap {
		name := termtext.Line(c.Name)
		if r := []rune(name); len(r) > 64 {
			name = string(r[:63]) + "…"
		}
		what = c.Kind + " " + name
	}
	return fmt.Sprintf("limits: %s has %d of %d live runs", what, c.Runs, c.Max)
}

// CapsOn are the caps l puts on a run like me, each with how many of runs
// count under it, the fleet's first, then config.CapKinds' order. runs
// include me only when me already holds its lease.
func CapsOn(l config.Limits, me Run, runs []Run) []CapCount {
	var out []CapCount
	if l.Fleet > 0 {
		out = append(out, CapCount{Kind: FleetCap, Runs: len(runs), Max: l.Fleet})
	}
	for _, kind := range config.CapKinds {
		name := me.name(kind)
		most, ok := l.Max(kind, name)
		if !ok {
			continue
		}
		c := CapCount{Kind: kind, Name: name, Max: most}
		for _, r := range runs {
			if r.name(kind) == name {
				c.Runs++
			}
		}
		out = append(out, c)
	}
	return out
}

// FullCaps are the caps of l that runs fill, for a board: the fleet's,
// then by kind and name.
func FullCaps(l config.Limits, runs []Run) []CapCount {
	if l.None() {
		return nil
	}
	var out []CapCount
	if l.Fleet > 0 && len(runs) >= l.Fleet {
		out = append(out, CapCount{Kind: FleetCap, Runs: len(runs), Max: l.Fleet})
	}
	for _, kind := range config.CapKinds {
		count := map[string]int{}
		for _, r := range runs {
			if name := r.name(kind); name != "" {
				count[name]++
			}
		}
		var full []CapCount
		for name, n := range count {
			if most, ok := l.Max(kind, name); ok && n >= most {
				full = append(full, CapCount{Kind: kind, Name: name, Runs: n, Max: most})
			}
		}
		slices.SortFunc(full, func(a, b CapCount) int { return strings.Compare(a.Name, b.Name) })
		out = append(out, full...)
	}
	return out
}
