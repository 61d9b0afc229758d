package workers

import (
	"errors"
	"fmt"
	"slices"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/contain"
	"github.com/fleetwatch/fleetwatch/workers/converse"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// onMail acts on a person's message to the running agent and logs it.
func (d *Driver) onMail(r *running, m claims.Message) look.MailReply {
	rep := d.mailReply(r, m)
	rep.Plan = r.job.Rel
	d.Log.Printf("%s from %s: %s%s", m.Kind, m.By, rep.Outcome, textNote(rep.Reason))
	d.logMessage(r.job.Rel, m, rep)
	d.save()
	return rep
}

func (d *Driver) mailReply(r *running, m claims.Message) look.MailReply {
	if r.handedOn != "" || !d.holds(r.job.Rel, r.me) {
		return look.Refused("the run no longer holds its plan's lease")
	}
	if m.Plan != "" && m.Plan != r.job.Rel {
		return look.Refused("it was for the run on " + m.Plan + ", which is over; this run works on " + r.job.Rel)
	}
	switch m.Kind {
	case claims.MailTell:
		return d.tell(r, m)
	case claims.MailInterrupt:
		return d.interrupt(r)
	case claims.MailAnswer:
		return d.answerAsk(r, m)
	}
	return look.Refused(m.Problem())
}

// tell steers the running turn where the protocol can, else keeps the
// note for the next turn; a one-shot run's plan keeps it for its next run.
func (d *Driver) tell(r *running, m claims.Message) look.MailReply {
	t := r.talk
	switch {
	case t == nil:
		if err := d.keepNote(r.job.Rel, m); err != nil {
			return look.Refused("the note could not be kept: " + err.Error())
		}
		return look.MailReply{Outcome: look.MailKept, Reason: "a one-shot run cannot hear it; the plan's next run gets it"}
	case t.closed:
		if err := d.keepNote(r.job.Rel, m); err != nil {
			return look.Refused("the note could not be kept: " + err.Error())
		}
		return look.MailReply{Outcome: look.MailKept, Reason: "the conversation has ended; the plan's next run gets it"}
	case r.meter.Paused != "":
		t.queued = append(t.queued, m)
		return look.MailReply{Outcome: look.MailQueued, Reason: "the run is paused (" + r.meter.Paused + "); it hears the note when it resumes"}
	case !t.turn:
		// With the notes that waited for the turn an interrupt ended.
		notes := append(t.queued, m)
		if err := d.prompt(r, joinNotes(notes)); err != nil {
			return look.Refused("the note could not be sent: " + err.Error())
		}
		t.queued = nil
		return look.MailReply{Outcome: look.MailSteered, Reason: fmt.Sprintf("sent as turn %d", t.turns)}
	}
	steered, err := t.conv.Steer(joinNotes([]claims.Message{m}))
	if err != nil || !steered {
		t.queued = append(t.queued, m)
		return look.MailReply{Outcome: look.MailQueued, Reason: "it goes with the next turn"}
	}
	return look.MailReply{Outcome: look.MailSteered, Reason: "into the running turn"}
}

// interrupt ends the running turn; the run then waits for a note.
func (d *Driver) interrupt(r *running) look.MailReply {
	t := r.talk
	switch {
	case t == nil:
		return look.Refused("a one-shot run has no turn to interrupt: `fleetwatch stop` ends the run")
	case t.closed:
		return look.Refused("the conversation has ended")
	case r.meter.Paused != "":
		return look.Refused("the run is paused (" + r.meter.Paused + "): resume it first")
	}
	if err := t.conv.Interrupt(); err != nil {
		if errors.Is(err, converse.ErrIdle) {
			return look.Refused("no turn is running")
		}
		return look.Refused("the interrupt failed: " + err.Error())
	}
	// Notes waiting for the next turn wait for a person's next word.
	return look.MailReply{Outcome: look.MailInterrupted, Reason: fmt.Sprintf("turn %d", t.turns)}
}

// answerAsk hands a person's answer to the question it names.
func (d *Driver) answerAsk(r *running, m claims.Message) look.MailReply {
	i := slices.IndexFunc(r.asks, func(w *waiting) bool { return w.ask.ID == m.Ask })
	if i < 0 {
		return look.Refused("no question " + m.Ask + " waits (it may have been answered)")
	}
	w := r.asks[i]
	if m.Option != "" && !slices.ContainsFunc(w.ask.Options, func(o converse.Option) bool { return o.ID == m.Option }) {
		return look.Refused(fmt.Sprintf("%q is not one of the question's options", m.Option))
	}
	if w.reply != nil {
		if m.Text == "" {
			return look.Refused("the agent asked a question: answer it with a text")
		}
		w.reply <- contain.AgentReply{Answer: m.Text}
	} else if err := r.talk.conv.Answer(m.Ask, converse.Reply{Option: m.Option, Text: m.Text, Deny: m.Deny}); err != nil {
		return look.Refused("the answer could not be given: " + err.Error())
	}
	r.asks = slices.Delete(r.asks, i, i+1)
	d.showAsking(r)
	if t := r.talk; t != nil && len(r.asks) == 0 && !t.turn && !t.idle {
		d.endTalk(r)
	}
	return look.MailReply{Outcome: look.MailAnswered}
}
