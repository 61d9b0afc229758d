package workers

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/ui/verbs"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// Talking to a running worker: t sends its run a note, i interrupts its
// conversation's turn. Both go through verbs.Send, which says how the
// driver took them (steered, queued, kept for the plan's next run,
// refused) on the status line.

// Asking is the state cell of a run whose agent waits for a person's
// answer; AskingShort the same where the note needs the room.
const (
	Asking      = "? waiting for input"
	AskingShort = "? waiting"
)

// canTalk says whether t (verb "tell") or i ("interrupt") applies to r,
// and why not: a run of this machine's with its agent going. A worker on
// another machine is left to verbs.Reach, which says whether the claims
// backend can carry a message there.
func canTalk(r *uictx.WorkerRow, verb string) (bool, string) {
	if r == nil {
		return false, verb + ": select a running worker in the workers pane (4)"
	}
	who := termtext.Line(r.St.AgentID)
	switch {
	case r.Pub != nil:
		return true, ""
	case r.Health != look.Live:
		state, _ := HealthCell(r)
		return false, verb + ": " + who + " has no run going (" + state + ")"
	case !r.Local:
		return true, ""
	case r.Child:
		return false, verb + ": " + who + " has written no state file yet; its driver cannot hear it"
	case r.St.Plan == "" || r.St.Agent == nil:
		return false, verb + ": " + who + " runs no agent now"
	}
	return true, ""
}

// askTell is t: a one-line note for the selected worker's run, which
// its driver steers into the running turn, queues for the next, or keeps
// for the plan's next run (a one-shot run).
func askTell(pc *uictx.Ctx, r *uictx.WorkerRow) tea.Msg {
	if ok, _ := canTalk(r, "tell"); !ok {
		return nil
	}
	row := *r
	who := termtext.Line(row.St.AgentID)
	if err := verbs.Reach(&row, pc.Claims); err != nil {
		return uictx.Status("✗ tell: "+err.Error(), true)
	}
	in := pc.TextField()
	in.Placeholder = "a note for the agent"
	in.CharLimit = claims.MaxMailText
	in.Width = 60
	cmd := in.Focus()
	t, by, c := pc.Opt.Tree, pc.Opt.Agent, pc.Claims
	body := []string{"A note to " + who + "'s run of " + termtext.Line(kit.PlanSlug(row.St.Plan)) +
		": a conversation hears it now (or with its next turn); a one-shot run's plan keeps it for its next run."}
	if a := row.St.Asking; a != nil {
		body = append(body, "It waits for an answer to: "+termtext.Line(a.Question)+" (the inbox (7) answers it)")
	}
	return uictx.BatchReq{uictx.QuestionReq{Q: uictx.Question{
		Title: "tell " + who, Body: body, Verb: "send", Input: &in,
		Refuse: func(_ model.Lane, s string) string {
			if s == "" {
				return "say something: an empty note is not sent"
			}
			return ""
		},
		Do: func(_ model.Lane, s string) tea.Cmd { return verbs.SendCmd(t, c, row, verbs.Note(by, s)) },
	}}, cmd}
}

// askInterrupt is i: a confirm, then the running turn ended; the run
// waits for a note.
func askInterrupt(pc *uictx.Ctx, r *uictx.WorkerRow) tea.Msg {
	if ok, _ := canTalk(r, "interrupt"); !ok {
		return nil
	}
	row := *r
	if err := verbs.Reach(&row, pc.Claims); err != nil {
		return uictx.Status("✗ interrupt: "+err.Error(), true)
	}
	who := termtext.Line(row.St.AgentID)
	t, by, c := pc.Opt.Tree, pc.Opt.Agent, pc.Claims
	return uictx.QuestionReq{Q: uictx.Question{
		Title: "Interrupt " + who + "'s turn",
		Body: []string{"End the turn " + who + "'s agent is taking, not its run: it stops what it does and waits for a note (t), " +
			"or its plan is parked after wait_for_answer. A one-shot run has no turn to interrupt (x stops it)."},
		Verb: "interrupt",
		Do:   func(model.Lane, string) tea.Cmd { return verbs.SendCmd(t, c, row, verbs.Interrupt(by)) },
	}}
}

// detailAsking is the question the run waits on, in the worker's detail.
func detailAsking(d *uictx.DetailText, st *look.State) {
	a := st.Asking
	if a == nil {
		return
	}
	d.Heading("Waiting for input")
	d.Block(a.Question)
	d.Field("request", a.ID)
	if a.Since > 0 {
		d.Field("since", uictx.Stamp(a.Since, float64(d.C.Opt.Tree.Now().UnixNano())/1e9))
	}
	for _, o := range a.Options {
		allow := ""
		if o.Allow {
			allow = " (allows)"
		}
		d.Field("option "+o.ID, o.Label+allow)
	}
	d.Note("answer it in the inbox (7): y allows, n denies, enter answers in words; or fleetwatch answer " + st.AgentID)
}
