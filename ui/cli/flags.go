package cli

import (
	"os"

	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/workers/look"
)

// The flags that say where the project is and who acts, each spelled once.

const rootHelp = "project root holding .plans/ (default: $FLEET_ROOT, else the nearest folder upwards with one)"

// rootFlag adds --root, the one way to say where the project is.
func rootFlag(fs *pflag.FlagSet, dst *string, help string) {
	fs.StringVar(dst, "root", "", help)
}

// projectFlags adds --root and its alias --project (the name watch,
// worktree and anchor's plan_board used).
func projectFlags(fs *pflag.FlagSet, dst *string, help string) {
	rootFlag(fs, dst, help)
	fs.StringVar(dst, "project", "", "same as --root")
}

// agentFlag adds --agent-id, who acts, defaulting to def.
func agentFlag(fs *pflag.FlagSet, dst *string, def, help string) {
	fs.StringVar(dst, "agent-id", def, help)
}

// tokenFlag adds --token, the lease token that proves who acts.
func tokenFlag(fs *pflag.FlagSet, dst *string) {
	fs.StringVar(dst, "token", os.Getenv("FLEET_LEASE_TOKEN"), "the token of the lease you hold (default: $FLEET_LEASE_TOKEN); without one the agent id must match")
}

// forceFlag adds --force; help says what it overrides for this command.
func forceFlag(fs *pflag.FlagSet, dst *bool, help string) {
	fs.BoolVar(dst, "force", false, help)
}

// portRangeFlag adds --port-range, defaulting to look.DefaultPorts.
func portRangeFlag(fs *pflag.FlagSet, dst *string, help string) {
	fs.StringVar(dst, "port-range", look.DefaultPorts.String(), help)
}
