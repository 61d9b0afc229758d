// Package coord owns the coordinator's inbox (seed 004's "a worker writes
// its plan and stops; the coordinator approves through its inbox"): the
// proposals plan-first agents write under var/fleet/run/proposals/, the
// driver's authorship record beside each, the coordinator's approvals and
// rejections, and which turn a plan-first plan's next run takes. The leases
// the inbox holds are planfs's (model.Lease.Awaiting); coord decides, planfs
// moves.
package coord
