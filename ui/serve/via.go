package serve

import "fleetwatch/planfs"

// setVia stamps how the actor reached the tree into every event it writes.
func setVia(t *planfs.Tree, via string) { t.Via = via }
