package cli

import (
	"fleetwatch/planfs"
	"fleetwatch/workers"
)

// backendFor prepares the worktree's backend.
func (w *workOnce) backendFor(t *planfs.Tree, job *workers.Job) error {
	return nil // TODO(backend helper)
}
