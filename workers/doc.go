// Package workers turns a claim into work an agent can do safely beside
// others, and keeps workers running: a git worktree per agent id, on its own
// branch, registered in var/worktrees/registry.json in anchor's format; the
// systemd user timers and crontab lines that run `fleetwatch work-once` on a
// schedule, installed through the systemctl program; and the per-worker
// state files in var/fleet/workers/.
package workers
