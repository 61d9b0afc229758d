package cli

import "github.com/fleetwatch/fleetwatch/workers/landing/gocache"

// gocacheVerb is the hidden verb a check's go command starts as its
// GOCACHEPROG (`fleetwatch gocacheprog --read DIR... --write DIR`). It is
// dispatched before the command tree is built or any setting read: the go
// command starts it once per build.
const gocacheVerb = "gocacheprog"

// gocacheProg runs the cache program when args name it; ok false when
// they name another command.
func gocacheProg(args []string) (code int, ok bool) {
	if len(args) == 0 || args[0] != gocacheVerb {
		return 0, false
	}
	return gocache.Main(args[1:]), true
}
