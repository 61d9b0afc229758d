// Package contain owns the sandbox glue around one agent run: the Box
// (its cgroup, private run folder, network policy and egress proxy), the
// GitBox that keeps the agent's git objects out of the real repository
// until the driver brings its branch, the WriteWatch that follows writes
// in the worktree for the scope scanner, and the Broker: the socket
// through which an agent asks its driver (AskDriver) to complete, park or
// release its plan.
package contain
