package tree

// EnvFile is the file in a worktree that holds its backend's variables.
const EnvFile = ".env.fleetwatch"
