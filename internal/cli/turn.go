package cli

import (
	"fleetwatch/planfs"
	"fleetwatch/workers"
)

// turnFor decides a plan-first plan's turn.
func (w *workOnce) turnFor(t *planfs.Tree, job *workers.Job) error {
	return nil // TODO(plan-first helper)
}
