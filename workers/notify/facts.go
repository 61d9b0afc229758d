package notify

import (
	"context"
	"errors"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/coord"
	"github.com/fleetwatch/fleetwatch/workers/landing"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// Reading is one look at everything notices come from, as a face holds
// it: the cockpit from what its panes read, the watcher from Gather. Facts
// turns either into model.NoticeFacts, so both notice the same things.
type Reading struct {
	Board    *model.Board
	Workers  []model.WorkerFact
	Inbox    []coord.Entry
	Overlaps []look.Overlap
	Gate     []string // the merge queue's notices (landing.Listing.Notices)
	Events   []planfs.Event
	// Commits is look.BranchCommits; StuckAfter 0 means never stuck.
	Commits    map[string]float64
	StuckAfter time.Duration
	// Endpoints are the endpoints' states (look.ReadEndpoints).
	Endpoints []look.EndpointState
	Now       float64
}

// Facts is r as the notices' facts.
func Facts(r Reading) model.NoticeFacts {
	f := model.NoticeFacts{Workers: r.Workers, Gate: r.Gate, Commits: r.Commits, StuckAfter: r.StuckAfter.Seconds(), Now: r.Now}
	if r.Board != nil {
		f.Rows, f.Leases = r.Board.Rows, r.Board.Leases
	}
	f.Proposals = proposalFacts(r.Inbox)
	f.Endpoints = endpointFacts(r.Endpoints, time.Unix(0, int64(r.Now*1e9)))
	for _, o := range r.Overlaps {
		f.Overlaps = append(f.Overlaps, model.OverlapFact{A: o.A, B: o.B, Paths: o.Paths, Checked: o.Checked, Conflict: o.Conflict})
	}
	f.Landings = landingFacts(r.Events)
	return f
}

// proposalFacts are the inbox's proposals waiting for an answer.
func proposalFacts(inbox []coord.Entry) []model.ProposalFact {
	var out []model.ProposalFact
	for i := range inbox {
		if e := &inbox[i]; e.Waiting() {
			out = append(out, model.ProposalFact{Slug: e.Slug, Rel: e.Rel, Agent: EntryAgent(e), N: e.N})
		}
	}
	return out
}

// endpointFacts are the endpoints turned off or shut with a problem at at.
func endpointFacts(endpoints []look.EndpointState, at time.Time) []model.EndpointFact {
	var out []model.EndpointFact
	for _, e := range endpoints {
		if (e.State == look.EndpointDisabled || e.State == look.EndpointShut) && e.Problem(at) != "" {
			out = append(out, model.EndpointFact{Name: e.Name, State: e.State, Reason: e.Reason,
				Since: float64(e.Since.Unix()), Until: float64(e.Until.Unix())})
		}
	}
	return out
}

// landingFacts are the landings refused, from the event log.
func landingFacts(events []planfs.Event) []model.LandingFact {
	var out []model.LandingFact
	for _, e := range events {
		if e.Event != landing.EventLandRefused {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, e.TS)
		if err == nil {
			out = append(out, model.LandingFact{Slug: e.Slug, Commit: e.To, Reason: e.Reason, At: float64(at.Unix())})
		}
	}
	return out
}

// EntryAgent is the agent whose plan an inbox entry is: the lease's
// holder, or the proposal's author; "—" when neither says.
func EntryAgent(e *coord.Entry) string {
	switch {
	case e.Lease != nil:
		return e.Lease.AgentID
	case e.Record != nil:
		return e.Record.AgentID
	}
	return "—"
}

// WorkerFact is what the notices need of a worker's state judged h.
func WorkerFact(st *look.State, h look.Health) model.WorkerFact {
	w := model.WorkerFact{Agent: st.AgentID, Plan: st.Plan, Health: string(h), Exit: st.ExitCode, Violations: st.Violations,
		Note: st.Note, Paused: st.Paused}
	if !st.Started.IsZero() {
		w.Started = float64(st.Started.Unix())
	}
	if !st.LastHeartbeat.IsZero() {
		w.Heartbeat = float64(st.LastHeartbeat.Unix())
	}
	if !st.PausedAt.IsZero() {
		w.PausedAt = float64(st.PausedAt.Unix())
	}
	if a := st.Asking; a != nil {
		// The question as one line: it is the agent's, said to a person.
		w.Asking, w.AskID, w.AskedAt = claims.Clip(a.Question, 200), a.ID, a.Since
	}
	return w
}

// eventsRead is how many of the newest events a look reads for refused
// landings.
const eventsRead = 500

// remoteTimeout bounds a look at a remote claims backend.
const remoteTimeout = 10 * time.Second

// Gather reads everything the cockpit's notices come from, without a
// cockpit: the board (from backend's view when it is not nil, else the
// tree), the workers' state files and overlaps, the inbox, the merge
// queue's gate and the event log. A part that cannot be read is left out
// and said in the error; the rest still counts.
func Gather(t *planfs.Tree, backend claims.Backend, stuckAfter time.Duration) (Reading, error) {
	var errs []error
	now := t.NowSeconds()
	r := Reading{StuckAfter: stuckAfter, Now: now}
	snap, err := snapshot(t, backend)
	if err != nil {
		errs = append(errs, err)
	} else {
		r.Board = model.NewBoard(snap, model.Options{Now: now, History: t.History()})
		r.Board.Leases = snap.Leases
	}
	states, _ := look.ReadStates(t.Project)
	at := time.Unix(0, int64(now*1e9))
	for i := range states {
		r.Workers = append(r.Workers, WorkerFact(&states[i], states[i].Health(at)))
	}
	r.Overlaps = look.Overlaps(t.Project, states)
	// Other machines' workers, as the cockpit's Workers pane shows them:
	// a worker failed, stale or dead on any host is noticed.
	if f, ok := backend.(claims.Fleet); ok && backend != nil {
		ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout)
		pubs, err := look.ReadPublished(ctx, f)
		cancel()
		if err != nil {
			errs = append(errs, err)
		}
		for i := range pubs {
			w := WorkerFact(&pubs[i].State, pubs[i].Health)
			w.Agent = pubs[i].AgentID + " on " + pubs[i].Host
			r.Workers = append(r.Workers, w)
		}
	}
	if r.Inbox, err = coord.Inbox(t); err != nil {
		errs = append(errs, err)
	}
	if l, err := landing.List(t.Project); err == nil {
		r.Gate = l.Notices
	}
	if r.Events, err = t.RecentEvents(eventsRead); err != nil {
		errs = append(errs, err)
	}
	r.Commits = look.BranchCommits(t.Project)
	r.Endpoints = look.ReadEndpoints(t.Project)
	return r, errors.Join(errs...)
}

// snapshot is the tree as the board shows it: backend's view, or a scan
// with what the next claim repairs previewed (never written).
func snapshot(t *planfs.Tree, backend claims.Backend) (*model.Snapshot, error) {
	if backend != nil {
		ctx, cancel := context.WithTimeout(context.Background(), remoteTimeout)
		defer cancel()
		v, err := backend.View(ctx)
		if err == nil && (v == nil || v.Snapshot == nil) {
			err = errors.New("the claims backend returned no view")
		}
		if err != nil {
			return nil, err
		}
		return v.Snapshot, nil
	}
	snap, err := t.Rescan()
	if err != nil {
		return nil, err
	}
	preview, _ := t.Preview(snap)
	return preview, nil
}
