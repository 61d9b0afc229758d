package planfs

import (
	"os"
	"syscall"
)

// FailpointEnv names the environment variable that makes a verb kill its own
// process with SIGKILL at a named step, so tests can prove a crash anywhere
// loses no plan. Steps: claim:ready-lease, claim:moved, claim:lease,
// release:moved, park:moved, return:moved, complete:moved, promote:moved,
// recover:locked, sendback:noted, sendback:moved, defer:noted, defer:moved,
// land:plan-moved; and landing's lander (the same variable): land:built,
// land:checked, land:cas, land:moved, land:pinned.
const FailpointEnv = "FLEETWATCH_FAILPOINT"

var failpointName = os.Getenv(FailpointEnv)

func failpoint(step string) {
	if failpointName != "" && failpointName == step {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
}
