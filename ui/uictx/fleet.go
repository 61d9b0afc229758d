package uictx

import (
	"github.com/fleetwatch/fleetwatch/workers"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
)

// FleetMsg is one reading of the spend: ReadFleet's, and the runs paused
// where they are.
type FleetMsg struct {
	Fleet     ledger.Fleet
	Err       error
	Paused    []workers.State
	Endpoints []workers.EndpointState // the endpoints in trouble
}
