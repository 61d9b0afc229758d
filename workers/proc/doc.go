// Package proc owns the processes of workers: spawning a worker as cron
// would (Start, StartDetached, StartDetachedAs), stopping and pausing one (Stop,
// StopAs, Pause, StopRemote), the supervisor that outlives a driver, the
// subreaper and the reaping of an agent's adopted daemons, what a dead
// driver left running (StopLeftovers, Recover), a driver's lock
// (DriverRunning), an agent's command line (Placeholders, CheckExecutor,
// no shell), the editor, and the schedules that start work-once: systemd
// user timers, their install and uninstall plans, and crontab lines.
package proc
