package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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

const askLong = `Asks the operator a question, from an agent under a fleetwatch driver: the run
waits for input (every face shows the question; the notices tell the operator's
targets) until a person answers with fleetwatch answer, and the answer is printed on
stdout. A run that waits longer than wait_for_answer: (fleetwatch.yaml, 30m by
default) is parked with its question. Exit 0 answered, 2 refused or not under a driver.`

// askCmd is `fleetwatch ask`: the agent's question to the operator,
// through its driver.
func askCmd() *cobra.Command {
	cmd := leaf("ask QUESTION...", "ask the operator a question (an agent under a driver)", func(fs *pflag.FlagSet) body {
		// Taken as every verb takes it; the driver, not the tree, answers.
		var root string
		rootFlag(fs, &root, rootHelp)
		return func(pos []string, stdout, stderr io.Writer) int {
			question := strings.TrimSpace(strings.Join(pos, " "))
			if question == "" {
				return fail(stderr, exitError, "ask: want a question")
			}
			sock := driverSocket()
			if sock == "" {
				return fail(stderr, exitError, "ask: only an agent run by a fleetwatch driver can ask ($%s is not set)", contain.SocketEnv)
			}
			rep, err := contain.AskDriver(sock, contain.AgentRequest{Verb: contain.AskQuestion, Token: os.Getenv("FLEET_LEASE_TOKEN"), Question: question})
			if err != nil {
				return fail(stderr, exitError, "ask: %v", err)
			}
			if rep.Error != "" {
				return fail(stderr, exitError, "ask: refused by the driver: %s", rep.Error)
			}
			fmt.Fprintln(stdout, rep.Answer)
			return exitOK
		}
	})
	cmd.Long = askLong
	cmd.Example = "  fleetwatch ask \"Postgres 15 or 16 for the new service?\""
	return cmd
}
