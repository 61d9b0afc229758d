// Package workers turns a claim into work an agent can do safely beside
// others. For now that is a git worktree per agent id, on its own branch,
// registered in var/worktrees/registry.json in anchor's format.
package workers
