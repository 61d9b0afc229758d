package landing

import "fleetwatch/planfs"

// writable refuses a viewer's tree (planfs.Tree.ReadOnly) before a landing
// verb reads git or changes anything, in one line naming what it would
// have changed: the engine refuses, not only the key map.
func writable(t *planfs.Tree, what string) error {
	if err := t.Writable(); err != nil {
		return &planfs.PlanError{Rel: what, Err: err, Detail: err.Error()}
	}
	return nil
}
