package registry

import (
	"fmt"
	"strings"
)

// Template is the endpoints.yaml `fleetwatch scaffold` writes: one endpoint
// per preset and one with a command of its own, all commented out. A line
// "# text" is a note; a line "#key: value" or "#  nested" is a setting:
// deleting its # turns it on, and every endpoint so uncommented parses.
func Template() string {
	var b strings.Builder
	b.WriteString(`# endpoints.yaml: the coding agents this project's workers run (fleetwatch help workers).
# Turn one on: delete the # of "#endpoints:" and of each line of the endpoint of
# an agent you have. 'fleetwatch agents' shows the exact command each preset
# runs; 'fleetwatch doctor' says whether its program is on PATH. Then run one:
# fleetwatch work-once --run --ensure-worktree --endpoint claude --agent-id mid-1
# tier is the plans an endpoint is fit for (small, mid, reasoner, frontier);
# model is passed to the agent as the tool names it.

#endpoints:
`)
	for _, p := range Presets {
		fmt.Fprintf(&b, "#  # %s, headless: %s\n", p.Name, p.Docs)
		fmt.Fprintf(&b, "#  - name: %s\n#    tier: mid\n#    model: %s\n#    agent: %s\n", p.Name, p.Model, p.Name)
	}
	b.WriteString(`#  # Anything else: your own command line, one word an argument, no shell;
#  # {plan}, {model}, {worktree} and the rest are filled in, and FLEET_* set.
#  - name: script
#    tier: small
#    command: [./scripts/agent.sh, "{plan}"]
#    # a run that edits but never commits: fleetwatch commits the edits
#    # itself (as fleetwatch) instead of parking the plan in blocked/
#    commit: auto
`)
	return b.String()
}
