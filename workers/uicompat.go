package workers

import "github.com/fleetwatch/fleetwatch/workers/tree"

// Forwarders for the root ui package while it moves (issue 42): the
// last commit rewrites ui's files with the floors' map and deletes this
// file.

var SafeID = tree.SafeID
