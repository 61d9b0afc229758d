package verbs

import (
	"context"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// A person's message to a running worker (a note, an interrupt, an
// answer) goes from every pane through Send alone, so the way a message
// travels (this machine's mail folder; another machine's, through the
// claims backend) is decided in one place.

// Send hands m to the driver of the worker r shows and returns how it
// took it. A worker on this machine hears it through its mail folder
// (proc.Tell), answering at once; one on another machine through the
// claims backend c (proc.TellRemote), whose driver takes it at its next
// heartbeat (MailSent). It blocks until then (proc.TellWait at most): run
// it off the UI goroutine (SendCmd).
func Send(t *planfs.Tree, c *claims.Opened, r uictx.WorkerRow, m claims.Message) (look.MailReply, error) {
	if err := Reach(&r, c); err != nil {
		return look.MailReply{}, err
	}
	if !elsewhere(&r) {
		return proc.Tell(t, r.St, m)
	}
	if err := t.Writable(); err != nil {
		return look.MailReply{}, err
	}
	f, _ := claimsFleet(c)
	ctx, cancel := context.WithTimeout(context.Background(), proc.TellWait)
	defer cancel()
	if err := proc.TellRemote(ctx, f, r.St, m); err != nil {
		return look.MailReply{}, err
	}
	return look.MailReply{Outcome: look.MailSent, Reason: "on " + r.St.Host + ", at its driver's next heartbeat", Plan: r.St.Plan}, nil
}

func claimsFleet(c *claims.Opened) (claims.Fleet, bool) {
	if c == nil {
		return nil, false
	}
	f, ok := c.Backend.(claims.Fleet)
	return f, ok
}

// elsewhere reports whether r is a worker of another machine.
func elsewhere(r *uictx.WorkerRow) bool { return r.Pub != nil || !r.Local && r.St.Host != "" }

// Reach says why a message cannot reach the worker r from this cockpit
// (whose claims backend is c), nil when it can be sent (its driver may
// still refuse it).
func Reach(r *uictx.WorkerRow, c *claims.Opened) error {
	who := termtext.Line(r.St.AgentID)
	switch {
	case elsewhere(r):
		if _, ok := claimsFleet(c); !ok {
			return fmt.Errorf("%s runs on %s, and this project's claims backend keeps no other machine's workers: use fleetwatch tell, interrupt or answer there",
				who, termtext.Line(r.St.Host))
		}
		if r.St.State != look.StateRunning || (r.Health != look.Live && r.Health != look.Stale) {
			return fmt.Errorf("%s on %s has no run going (%s)", who, termtext.Line(r.St.Host), r.Health)
		}
		return nil
	case !r.Local:
		return fmt.Errorf("%s's state file names no host, so its driver cannot be found", who)
	case r.Child:
		return fmt.Errorf("%s has written no state file yet; its driver cannot hear a message", who)
	case r.St.State != look.StateRunning || r.Health != look.Live:
		return fmt.Errorf("%s has no run going (%s)", who, r.Health)
	case r.St.Plan == "" || r.St.Agent == nil:
		return fmt.Errorf("%s runs no agent now; nothing to hear a message", who)
	}
	return nil
}

// SendCmd is Send off the UI goroutine: how the driver took m is the
// status line's, a refusal in the error style.
func SendCmd(t *planfs.Tree, c *claims.Opened, r uictx.WorkerRow, m claims.Message) tea.Cmd {
	return func() tea.Msg {
		rep, err := Send(t, c, r, m)
		if err != nil {
			return uictx.ActionMsg{Err: fmt.Errorf("%s: %w", m.Kind, err)}
		}
		if rep.Outcome == look.MailRefused {
			return uictx.ActionMsg{Err: fmt.Errorf("%s: %s refused: %s", m.Kind, termtext.Line(r.St.AgentID), termtext.Line(rep.Reason))}
		}
		return uictx.ActionMsg{Done: Said(r.St.AgentID, rep)}
	}
}

// Said is how a driver took a message, in a line: "w-1: steered (into
// the running turn)", "w-1: kept for the plan's next run (…)".
func Said(agent string, rep look.MailReply) string {
	words := rep.Outcome
	switch rep.Outcome {
	case look.MailKept:
		words = "kept for the plan's next run"
	case look.MailQueued:
		words = "queued for the next turn"
	}
	line := termtext.Line(agent) + ": " + words
	if rep.Reason != "" {
		line += " (" + termtext.Line(rep.Reason) + ")"
	}
	return line
}

// Note, Interrupt and Answer are the messages the cockpit sends, from
// the operator by.
func Note(by, text string) claims.Message {
	return claims.Message{Kind: claims.MailTell, By: by, Text: text}
}

func Interrupt(by string) claims.Message { return claims.Message{Kind: claims.MailInterrupt, By: by} }

// Answer is the answer to the request ask: an option's id, a denial, or
// words.
func Answer(by, ask string, option string, deny bool, text string) claims.Message {
	return claims.Message{Kind: claims.MailAnswer, By: by, Ask: ask, Option: option, Deny: deny, Text: text}
}
