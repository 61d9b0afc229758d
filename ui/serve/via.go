package serve

import "github.com/fleetwatch/fleetwatch/planfs"

// setVia stamps how the actor reached the tree into every event it writes.
func setVia(t *planfs.Tree, via string) { t.Via = via }
