package config

import (
	"time"

	"gopkg.in/yaml.v3"
)

// Worktree is the `worktree:` section of fleetwatch.yaml: what each agent's
// worktree gets besides its checkout, so agents never share a backend.
//
//	worktree:
//	  ports: 2                      # FLEET_PORT, FLEET_PORT_1
//	  env:
//	    DATABASE_URL: "postgres:///app_{agent_id}"
//	    APP_PORT: "{port}"
//	  setup: [[createdb, "app_{agent_id}"], [make, migrate]]
//	  teardown: [dropdb, --if-exists, "app_{agent_id}"]
//	  timeout: 5m
type Worktree struct {
	// Ports is how many ports each agent gets (a block of N; 0 means the
	// one port every agent already has).
	Ports int
	// Env are the variables written to <worktree>/.env.fleetwatch and put
	// in the executor's environment, in the file's order; their values are
	// templates ({agent_id} {port} {port_1}… {slug} {worktree} {project}).
	Env []EnvVar
	// Setup and Teardown are argvs (no shell) run in the worktree with
	// that environment, in order, each within Timeout.
	Setup, Teardown [][]string
	// Timeout bounds each setup or teardown command; 0 means
	// DefaultBackendTimeout.
	Timeout time.Duration
	Line    int // where the section starts, for errors about it
}

// EnvVar is one `env:` entry.
type EnvVar struct {
	Name, Template string
	Line           int
}

// DefaultBackendTimeout is a setup or teardown command's timeout when the
// section names none.
const DefaultBackendTimeout = 5 * time.Minute

// parseWorktree reads the `worktree:` section.
func parseWorktree(val *yaml.Node) (Worktree, error) {
	return Worktree{Line: val.Line}, nil // TODO(backend helper): parse ports, env, setup, teardown, timeout
}
