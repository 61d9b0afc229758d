package cli

import (
	"fmt"
	"io"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/registry"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// sayCaps prints, after --list's table, the cap of fleetwatch.yaml's
// limits: that keeps worker from claiming now, counted from leases (the
// lease files, or the remote view's).
func sayCaps(stderr io.Writer, project string, worker model.Worker, ep registry.Endpoint, leases []model.Lease, now float64) {
	if why := look.CapProblem(project, worker, ep, leases, now); why != "" {
		fmt.Fprintln(stderr, termtext.Line("# "+why))
	}
}
