package workers

import "fleetwatch/internal/config"

// Backend is a worktree's own backend for one job, as fleetwatch.yaml's
// `worktree:` section makes it: the agent's port block, the variables
// written to <worktree>/.env.fleetwatch (git-ignored through the
// repository's exclude file), and the setup that ran for it.
type Backend struct {
	Ports []int
	Env   []string // KEY=VALUE, in the file's order
	File  string   // the .env.fleetwatch written, "" when there is no env
	// SetUp says setup ran now (the first job in this worktree, or the
	// first after a teardown).
	SetUp bool
}

// EnvFile is the file in a worktree that holds its backend's variables.
const EnvFile = ".env.fleetwatch"

// PrepareBackend gives agentID's worktree its backend for slug: its ports,
// .env.fleetwatch, and, when it was never set up or was set up for
// another plan (or another agent), teardown of the old one and setup of the
// new. A failing setup is an error that says which command and why; the
// caller gives the plan back.
func PrepareBackend(project string, s config.Worktree, agentID, slug, worktree string, ports []int) (Backend, error) {
	return Backend{Ports: ports}, nil // TODO(backend helper)
}

// TeardownBackend runs the teardown of whatever backend agentID's worktree
// was last set up with; nothing when it has none. Its failure keeps the
// worktree and says why.
func TeardownBackend(project string, s config.Worktree, agentID, worktree string) error {
	return nil // TODO(backend helper)
}
