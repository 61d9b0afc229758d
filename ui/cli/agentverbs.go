package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/workers/contain"
)

// An agent's own verbs on its own plan go to the driver that started it
// ($FLEET_SOCKET), which checks and performs them: a contained agent
// cannot write the plan tree, and an uncontained one is held to the same
// rules.

// agentAsks are the operator verbs an agent may ask its driver for.
var agentAsks = map[model.Verb]string{
	model.Complete: contain.AskComplete,
	model.Park:     contain.AskPark,
	model.Release:  contain.AskRelease,
	model.Return:   contain.AskRelease,
}

// driverSocket is $FLEET_SOCKET: set only in an agent's environment.
func driverSocket() string { return os.Getenv(contain.SocketEnv) }

// askDriver sends req to the driver and prints where the plan is now.
func askDriver(sock string, req contain.AgentRequest, stdout, stderr io.Writer) int {
	rep, err := contain.AskDriver(sock, req)
	if err != nil {
		return fail(stderr, exitError, "%s: %v", req.Verb, err)
	}
	if rep.Error != "" {
		return fail(stderr, exitError, "%s: refused by the driver: %s", req.Verb, rep.Error)
	}
	fmt.Fprintln(stdout, rep.Plan)
	return exitOK
}

// viaDriver runs work-once's verbs on the agent's own plan (--release,
// --heartbeat, --park, --return-ready) through the driver when there is
// one; asked is false for anything else.
func (w *workOnce) viaDriver(stdout, stderr io.Writer) (code int, asked bool) {
	sock := driverSocket()
	if sock == "" {
		return 0, false
	}
	named := w.path
	if named == "" {
		named = w.slug
	}
	req := contain.AgentRequest{Token: w.token}
	switch {
	case w.release != "":
		req.Verb, req.Plan = contain.AskRelease, w.release
	case w.heartbeat != "":
		req.Verb, req.Plan = contain.AskHeartbeat, w.heartbeat
	case w.park != "":
		req.Verb, req.Plan, req.To = contain.AskPark, named, w.park
	case w.returnReady:
		req.Verb, req.Plan = contain.AskRelease, named
	default:
		return 0, false
	}
	return askDriver(sock, req, stdout, stderr), true
}
