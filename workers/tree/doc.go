// Package tree owns a project's git worktrees on disk, the lowest floor of
// workers: the git calls the workers make (through gitenv), the worktree
// registry in anchor's format (var/worktrees/registry.json) with its lock,
// an agent id's safe folder name, the feature and integration branches,
// and the files workers write under var/, never through a symlink.
package tree
