// Package look owns what a worker leaves on disk for others to read, and
// reads it for the faces: the state files (var/fleet/workers) and their
// health, the logs (written, rotated, tailed and parsed), the watch on the
// state folder, the ports each agent id holds, the worktree listing with
// its status, detail and diff, branch times, overlaps between running
// workers, endpoint trouble and plan failures, published and served
// workers, agent sessions, and the board's warnings (caps, spend,
// symlinks under var/).
package look
