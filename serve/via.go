package serve

import "fleetwatch/planfs"

// setVia stamps how the actor reached the tree into every event it writes.
// TODO(serve): t.Via once the roles branch (Tree.Via) is merged.
func setVia(t *planfs.Tree, via string) {}
