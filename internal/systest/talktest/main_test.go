// Package talktest runs real drivers whose agents are talked to while they
// run: a question the agent asks waits in every face until a person
// answers it, a note to a one-shot run is kept for its plan's next run, and
// what cannot be delivered is refused with its reason; with the real agent
// CLIs (opencode over ACP, Codex over app-server, Claude Code over
// stream-json) against the scripted model API, a note changes what the
// agent does next, an interrupt ends a turn and not the run, and a
// permission request waits in the inbox for its answer.
package talktest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/cli"
)

func TestMain(m *testing.M) { fwtest.Main(m, cli.Main) }
