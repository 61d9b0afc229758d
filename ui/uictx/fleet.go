package uictx

import (
	"github.com/fleetwatch/fleetwatch/workers/ledger"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// FleetMsg is one reading of the spend: ReadFleet's, and the runs paused
// where they are.
type FleetMsg struct {
	Fleet     ledger.Fleet
	Err       error
	Paused    []look.State
	Endpoints []look.EndpointState // the endpoints in trouble
}
