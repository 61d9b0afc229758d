package cli

import (
	"fmt"
	"io"

	"fleetwatch/model"
	"fleetwatch/planfs"
	"fleetwatch/workers"
	"fleetwatch/workers/coord"
)

// resumeOne takes up, for a --run worker, a plan-first plan the coordinator
// decided: its own first, else one whose agent is gone and that this worker
// is fit for (a fenced takeover: new token, the old run can no longer touch
// it). ok is false when there is none, or another worker won it.
func (w *workOnce) resumeOne(t *planfs.Tree, snap *model.Snapshot, worker model.Worker, skip map[string]bool, stderr io.Writer) (planfs.Claimed, bool) {
	running := func(agent string) bool { return workers.DriverRunning(t.Project, agent) }
	rel, takeOver, ok := coord.Resumable(t, snap, worker, w.options(t), w.ttl, running)
	if !ok || skip[rel] {
		return planfs.Claimed{}, false
	}
	skip[rel] = true
	from := ""
	if l := t.ReadLease(rel); l != nil {
		from = l.AgentID
	}
	held, err := t.Resume(rel, worker.AgentID, w.ttl, takeOver)
	if err != nil {
		say(stderr, "warning: cannot resume %s: %v", rel, err)
		return planfs.Claimed{}, false
	}
	w.markResumed(rel)
	if takeOver {
		say(stderr, "resumed %s, decided for %s, who is gone", rel, from)
	} else {
		say(stderr, "resumed %s: the coordinator decided", rel)
	}
	return held, true
}

// resumeNamed handles a named claim of an in-progress plan the inbox holds:
// this agent's decided one is resumed; one still awaiting approval is
// refused (exit 1). done is false for any other plan.
func (w *workOnce) resumeNamed(t *planfs.Tree, rel string, worker model.Worker, stdout, stderr io.Writer) (planfs.Claimed, int, bool) {
	if model.Rel(rel).Lane() != model.InProgress {
		return planfs.Claimed{}, 0, false
	}
	l := t.ReadLease(rel)
	switch {
	case l == nil || l.Corrupt != "" || l.Awaiting == "":
		return planfs.Claimed{}, 0, false
	case l.Awaiting == model.AwaitApproval:
		return planfs.Claimed{}, fail(stderr, exitNothing, "%s: awaiting approval in the inbox (fleetwatch approve or reject decides)", rel), true
	case l.AgentID != worker.AgentID:
		return planfs.Claimed{}, fail(stderr, exitNothing, "%s: %s", rel, l.AwaitingText()), true
	}
	held, err := t.Resume(rel, worker.AgentID, w.ttl, false)
	if err != nil {
		return planfs.Claimed{}, fail(stderr, exitNothing, "%v", err), true
	}
	w.markResumed(rel)
	fmt.Fprintln(stdout, t.Abs(held.Rel))
	return held, exitOK, true
}

func (w *workOnce) markResumed(rel string) {
	if w.resumed == nil {
		w.resumed = map[string]bool{}
	}
	w.resumed[rel] = true
}
