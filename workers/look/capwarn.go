package look

import (
	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	endpoints "github.com/fleetwatch/fleetwatch/registry"
)

// RunsAsOf is what a worker on ep records in its leases: its fit tier,
// its endpoint and the provider the endpoint declares.
func RunsAsOf(worker model.Worker, ep endpoints.Endpoint) model.RunsAs {
	return model.RunsAs{Tier: worker.Tier.String(), Endpoint: ep.Name, Provider: ep.Provider}
}

// CapWarnings are the board problems of fleetwatch.yaml's limits: each
// cap the live runs among a board's leases fill, while it is full.
func CapWarnings(project string, leases []model.Lease, now float64) []model.Warning {
	s, err := config.Load(project)
	if err != nil || s.Limits.None() {
		return nil // the settings' own error is said where they are read
	}
	var out []model.Warning
	for _, c := range claims.FullCaps(s.Limits, claims.BoardRuns(leases, now)) {
		out = append(out, model.Warning{File: config.File, Line: s.Limits.Line,
			Message: c.String() + "; workers under it claim nothing until one ends"})
	}
	return out
}

// CapProblem is what `work-once --list` says of worker on ep: the first
// cap it counts under that the live runs among a board's leases fill, ""
// when none does (or no limits: are set).
func CapProblem(project string, worker model.Worker, ep endpoints.Endpoint, leases []model.Lease, now float64) string {
	s, err := config.Load(project)
	if err != nil || s.Limits.None() {
		return ""
	}
	me := claims.Run{Host: Hostname(), RunsAs: RunsAsOf(worker, ep)}
	for _, c := range claims.CapsOn(s.Limits, me, claims.BoardRuns(leases, now)) {
		if c.Full() {
			return c.String() + "; this worker would claim nothing"
		}
	}
	return ""
}
