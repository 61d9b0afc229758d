package cli

import (
	"fleetwatch/planfs"
	"fleetwatch/workers"
)

// scopeFor fills the scanner's part of job.
func (w *workOnce) scopeFor(t *planfs.Tree, job *workers.Job) error {
	return nil // TODO(scope helper)
}
