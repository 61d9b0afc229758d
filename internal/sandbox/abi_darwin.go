package sandbox

import "errors"

// errNoLandlock is why agents cannot be contained on macOS: Landlock is
// Linux's, and fleetwatch has no other containment. Status turns it into
// `sandbox: require` refusing, and auto running agents uncontained.
var errNoLandlock = errors.New("macOS has no Landlock")

// landlockABI is 0 on macOS, as on a Linux kernel without Landlock.
func landlockABI() (int, error) { return 0, errNoLandlock }
