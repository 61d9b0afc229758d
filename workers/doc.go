// Package workers turns a claim into work an agent does safely beside
// others, and keeps workers running and visible:
//   - the work loop behind `work-once` (WorkOnce): pick, claim (through the
//     lease files or any claims.Backend), resume a decided plan-first plan,
//     the plan or build turn, scope and backend jobs, the lease kept and
//     fenced, the plan handed back or parked;
//   - the driver behind `work-once --run`: it hands a claimed plan to the
//     executor (argv with placeholders, no shell), renews the lease while
//     the agent works, and records the worker in var/fleet/workers/<id>.json
//     and var/fleet/logs/<id>.log;
//   - a git worktree and a port per agent id (var/worktrees/registry.json in
//     anchor's format, ports in var/worktrees/ports.json), and their safe
//     removal;
//   - spawning a detached worker as cron would, stopping one, following its
//     log and watching the state files, for the UI;
//   - what an agent changed: a branch against its merge base with the
//     integration branch, and its worktree's uncommitted changes, computed
//     when asked (diff.go);
//   - the systemd user timers and crontab lines that run `fleetwatch
//     work-once` on a schedule.
package workers
