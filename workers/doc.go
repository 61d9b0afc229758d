// Package workers is the work loop, the top floor of the driver: it turns
// a claim into work an agent does safely beside others.
//   - WorkOnce, behind `work-once`: pick, claim (through the lease files or
//     any claims.Backend), resume a decided plan-first plan, the plan or
//     build turn, scope and backend jobs, the lease kept and fenced, the
//     plan handed back or parked;
//   - the Driver, behind `work-once --run`: it hands a claimed plan to the
//     executor in its sandbox, renews the lease while the agent works,
//     watches its scope, spend and endpoint, answers its broker, publishes
//     it to the fleet and records it in var/fleet/workers/<id>.json.
//
// The floors below it, each its own package (internal/shape's
// workerFloors keeps the imports pointing down): notify, landing, seat
// (an agent's worktree and backend), proc (processes, timers), look (what
// workers leave and faces read) and contain (the sandbox glue), ledger,
// and at the bottom tree (worktrees and git), meter, coord and egress.
package workers
