package landing

import (
	"fleetwatch/internal/sandbox"
	"fleetwatch/planfs"
)

// writable refuses a viewer's tree (planfs.Tree.ReadOnly) before a landing
// verb reads git or changes anything, in one line naming what it would
// have changed: the engine refuses, not only the key map. Every caller is
// a person's verb (approve, queue, land, send back, a peer review), so it
// also refuses a process an agent or a check started, however its
// environment was cleaned.
func writable(t *planfs.Tree, what string) error {
	if err := t.Writable(); err != nil {
		return &planfs.PlanError{Rel: what, Err: err, Detail: err.Error()}
	}
	if why := sandbox.AgentRun(); why != "" {
		return refused("%s: a person's verb, and %s", what, why)
	}
	return nil
}
