package workers

import (
	"cmp"
	"context"
	"path"
	"slices"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// Caps (fleetwatch.yaml's limits:) bound how many runs hold a live lease
// at once: the fleet's, each host's, endpoint's, provider's and tier's.
// They are counted from the leases of the claims backend, never from
// this machine's own state, so they hold across machines.
//
// A worker checks before it claims, and checks again after: a claim is
// followed by a fresh read of every lease (git: ls-remote and fetch;
// etcd: a linearizable get; lease files: a scan of .leases/), and if any
// cap its run counts under now holds more runs than it allows, counting
// its own lease, the worker hands the plan back (a release by
// compare-and-swap on its own lease, which never drops anyone else's)
// and exits idle. Its agent starts only after that read found room.
//
// Why no cap is ever exceeded by running agents: take any set of agents
// running at once under one cap. Each claimed at some moment and read
// the leases after it; their leases stay from their claim until their
// run ends. The one that claimed last read after every other one's claim,
// while all of those leases were still there, so it counted them all and
// its own: if they were more than the cap allows, it handed its plan back
// and never started. Racing workers may all back off (each sees the
// others' claims before their hand-backs): that costs an idle exit and a
// retry on the next tick, never an extra run. A plan handed back is free
// again in its ready lane, never lost.

// runsAs is what this worker's leases record for the caps.
func (w *WorkOnce) runsAs() model.RunsAs {
	return look.RunsAsOf(w.Worker, w.Endpoint)
}

// thisRun is this worker's run as the caps count it.
func (w *WorkOnce) thisRun() claims.Run {
	return claims.Run{Host: cmp.Or(w.claimsHolder.Host, look.Hostname()), RunsAs: w.runsAs()}
}

// capsFull says, before a claim, which cap this worker counts under is
// full ("" when none): it claims nothing then, and exits idle. A backend
// that cannot be read is an error: the caps cannot be known.
func (w *WorkOnce) capsFull(ctx context.Context) (string, Status) {
	if w.limits.None() {
		return "", going
	}
	v, err := w.Claims.View(ctx)
	if err != nil {
		return "limits: cannot count the live runs: " + w.within(err).Error(), StatusError
	}
	for _, c := range claims.CapsOn(w.limits, w.thisRun(), claims.Runs(w.othersThan(v.Leases))) {
		if c.Full() {
			return c.String() + "; claiming nothing until one ends", StatusNothing
		}
	}
	return "", going
}

// othersThan is leases without the one this worker holds on the plan it
// names, if any: taking its own plan up again adds no run.
func (w *WorkOnce) othersThan(leases []claims.Remote) []claims.Remote {
	slug := w.Slug
	if w.Path != "" {
		slug = model.SlugOf(path.Base(w.Path))
	}
	if slug == "" {
		return leases
	}
	return slices.DeleteFunc(slices.Clone(leases), func(r claims.Remote) bool {
		return r.Slug == slug && r.AgentID == w.Worker.AgentID
	})
}

// capsHold checks, right after c was claimed and before its agent starts,
// that no cap this run counts under holds more runs than it allows, on a
// fresh read of every lease, its own among them. When one does, or the
// read fails, c is handed back: why says so, and code is StatusNothing
// (idle), or StatusError when the hand-back failed. why is "" when the
// caps hold.
func (w *WorkOnce) capsHold(ctx context.Context, s claimSide, c *claim) (why string, code Status) {
	if w.limits.None() {
		return "", going
	}
	code = StatusNothing
	v, err := w.Claims.View(ctx)
	if err != nil {
		why, code = "limits: cannot count the live runs after claiming: "+w.within(err).Error(), StatusError
	} else {
		for _, cc := range claims.CapsOn(w.limits, w.thisRun(), claims.Runs(v.Leases)) {
			if cc.Over() {
				why = cc.String() + " counting this claim (another worker claimed at the same time)"
				break
			}
		}
	}
	if why == "" {
		return "", going
	}
	if err := w.capsHandBack(s, c, why); err != nil {
		return why + "; could not hand back " + c.rel + ": " + err.Error(), StatusError
	}
	return why + "; handed back " + c.rel, code
}

// capsHandBack gives back a claim its caps refused: a decided plan-first
// plan taken up from the inbox (lease files) goes back to the inbox as
// decided, keeping its approval for the next run; any other is released.
func (w *WorkOnce) capsHandBack(s claimSide, c *claim, why string) error {
	if _, local := s.(*localSide); local && w.resumed[c.rel] {
		return w.Tree.Unresume(c.rel, planfs.Actor{AgentID: w.Worker.AgentID, Token: c.token, Reason: why})
	}
	return s.handBack(c, why)
}
