package workers

import (
	"fmt"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/agentout"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// reading is the tap on the agent's stdout: the meter reads its usage,
// and preset's reader its result.
func (r *running) reading(m *ledger.RunMeter, preset string) func(string) {
	r.result = agentout.For(preset)
	return func(line string) {
		m.Line(line)
		r.result.Line([]byte(line))
	}
}

// failedRun ends a run whose agent failed with its plan still held (how
// says how it ended): endpoint trouble or a task failure, each handing
// the plan back at once.
func (d *Driver) failedRun(r *running, o Outcome, how string) Outcome {
	if o.Code == 0 {
		o.Code = -1 // it exited 0 but said its turn failed
		how = "agent exited 0 saying its turn failed"
	}
	if t, ok := d.troubleOf(r); ok && d.Endpoint != "" {
		return d.endpointTrouble(r, o, how, t)
	}
	return d.taskFailed(r, o, how)
}

// troubleOf is the endpoint trouble r ended with: the API's own answer as
// the proxy saw it, which the agent cannot forge, over what the tool said.
// A tool's word counts only where the proxy saw no call (its login goes
// elsewhere): an agent cannot shut its endpoint by printing a 401. Where
// both speak of a 429, the tool's spent window refines the proxy's rate
// limit (Codex's usage_limit_reached is a 429 like any other).
func (d *Driver) troubleOf(r *running) (look.EndTrouble, bool) {
	res := r.result.Result()
	t := look.EndTrouble{Kind: res.Trouble, Status: res.Status, RetryAfter: res.RetryAfter, Reset: res.Reset, Why: res.Error}
	if r.meter.Proxy != nil {
		p, ok := r.meter.Proxy.Trouble()
		if !ok && r.meter.Proxy.Usage().Calls > 0 {
			return t, false
		}
		if ok {
			window := t.Kind == agentout.UsageWindow && p.Kind == agentout.RateLimited
			t.Kind, t.Status = p.Kind, p.Status
			if window {
				t.Kind = agentout.UsageWindow
			}
			if p.RetryAfter > 0 {
				t.RetryAfter = p.RetryAfter
			}
			if !p.Reset.IsZero() {
				t.Reset = p.Reset
			}
			if t.Why == "" {
				t.Why = fmt.Sprintf("the API answered %d", p.Status)
			}
		}
	}
	if t.Why == "" {
		t.Why = string(t.Kind)
	}
	return t, t.Kind != agentout.NoTrouble
}

// endpointTrouble marks the endpoint and hands the plan back at once, for
// a worker of another endpoint.
func (d *Driver) endpointTrouble(r *running, o Outcome, how string, t look.EndTrouble) Outcome {
	project := d.Tree.Project
	last, had := look.ReadEndpoint(project, d.Endpoint)
	st := look.NextState(d.Endpoint, last, had, t, time.Now())
	if err := look.WriteEndpoint(project, st); err != nil {
		d.Log.Printf("could not record endpoint %s's state: %v", d.Endpoint, tree.ErrText(err))
	}
	if err := look.PublishEndpoint(d.Board, d.Endpoint, &st); err != nil {
		d.Log.Printf("could not publish endpoint %s's state: %v", d.Endpoint, tree.ErrText(err))
	}
	state := "endpoint " + d.Endpoint + " is " + st.State
	if !st.Until.IsZero() {
		state += " until " + look.UTCText(st.Until)
	}
	if st.State == look.EndpointDisabled {
		d.Log.Printf("NOTICE: %s: its key or login was refused (%s); clear it once fixed: fleetwatch endpoints clear %s", state, t.Why, d.Endpoint)
	}
	reason := fmt.Sprintf("%s: endpoint trouble (%s): %s; %s", how, t.Kind, t.Why, state)
	return d.giveBack(r.job.Rel, r.me, reason, o)
}

// taskFailed hands the plan back with its failure counted; the project's
// `retries:`-th failure in a row parks it in blocked/ instead.
func (d *Driver) taskFailed(r *running, o Outcome, how string) Outcome {
	why := how
	if e := r.result.Result().Error; e != "" {
		why += ": " + e
	}
	project, slug := d.Tree.Project, r.meter.Slug
	n, err := look.AddFailure(project, slug, why)
	if err != nil {
		d.Log.Printf("could not count %s's failure: %v", slug, tree.ErrText(err))
	}
	limit := d.settings.TaskRetries()
	if n >= limit {
		if err := look.ClearFailures(project, slug); err != nil {
			d.Log.Printf("could not clear %s's failures: %v", slug, tree.ErrText(err))
		}
		return d.parkBlocked(r, fmt.Sprintf("%s; the task failed %d times (retries: %d)", why, n, limit))
	}
	return d.giveBack(r.job.Rel, r.me, fmt.Sprintf("%s; task failure %d of %d", why, n, limit), o)
}

// ranWell records that a run ended done: its endpoint works, and its
// plan's failures in a row are over.
func (d *Driver) ranWell(r *running) {
	if d.Endpoint != "" {
		if _, had := look.ReadEndpoint(d.Tree.Project, d.Endpoint); had {
			d.Log.Printf("endpoint %s works again", d.Endpoint)
			if err := look.ResetEndpoint(d.Tree.Project, d.Endpoint, d.Board); err != nil {
				d.Log.Printf("could not clear endpoint %s's state: %v", d.Endpoint, tree.ErrText(err))
			}
		}
	}
	if err := look.ClearFailures(d.Tree.Project, r.meter.Slug); err != nil {
		d.Log.Printf("could not clear %s's failures: %v", r.meter.Slug, tree.ErrText(err))
	}
}
