package workers

// The plan-first half of the driver (the coordinator's inbox): a plan turn
// runs the endpoint's plan_command (or the executor with {mode} = plan),
// and when the agent exits 0 the driver records who wrote the proposal and
// leaves the plan waiting for approval.

// argvFor is the command line job runs: its own (a plan_command), else the
// driver's executor.
func (d *Driver) argvFor(job Job) []string {
	if job.Argv != nil {
		return job.Argv
	}
	return d.Argv
}

// jobPlaceholders adds what job brings to the placeholders: its mode, the
// coordinator's files, its port block.
func (d *Driver) jobPlaceholders(job Job, ph *Placeholders) {
	// TODO(plan-first helper): Mode, Proposal, ApprovedPlan, Feedback, Ports, Project.
}

// planTurnDone handles a plan turn's exit 0: the proposal's authorship is
// recorded beside it and the lease is handed to the inbox.
func (d *Driver) planTurnDone(r *running, o Outcome) Outcome {
	// TODO(plan-first helper)
	return o
}
