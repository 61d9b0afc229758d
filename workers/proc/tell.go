package proc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// TellWait bounds how long a sender waits for a driver on this machine to
// take a message: its loop takes one between two steps, within
// milliseconds unless it is stuck.
const TellWait = 10 * time.Second

// Tell hands m to the driver of st on this machine, which acts on it (a
// note to its agent, an interrupt, an answer) and says how. A worker not
// running a plan here is refused with the reason and nothing is left for
// it. m gets its id, sender's host and time here.
func Tell(t *planfs.Tree, st look.State, m claims.Message) (look.MailReply, error) {
	if err := t.Writable(); err != nil {
		return look.MailReply{}, fmt.Errorf("%s %s: %w", m.Kind, st.AgentID, err)
	}
	if err := signalable(st, m.Kind); err != nil {
		return look.MailReply{}, err
	}
	if st.Plan == "" || st.Agent == nil {
		return look.MailReply{}, fmt.Errorf("%s runs no agent now (%s); nothing to %s", st.AgentID, st.Note, m.Kind)
	}
	ctx, cancel := context.WithTimeout(context.Background(), TellWait)
	defer cancel()
	m = Stamped(m)
	if m.Plan == "" {
		m.Plan = st.Plan
	}
	return look.SendMail(ctx, t.Project, st.AgentID, m)
}

// TellRemote leaves m in the record of st, a worker on another machine,
// through f: its driver takes it at its next heartbeat (sooner where the
// backend says so at once) and logs how.
func TellRemote(ctx context.Context, f claims.Fleet, st look.State, m claims.Message) error {
	if st.Host == "" || st.Host == look.Hostname() {
		return fmt.Errorf("%s runs here; its driver hears it through its mail folder", st.AgentID)
	}
	m = Stamped(m)
	if m.Plan == "" {
		m.Plan = st.Plan
	}
	err := f.Send(ctx, st.Host, st.AgentID, m)
	switch {
	case errors.Is(err, claims.ErrWorkerDone):
		return fmt.Errorf("%s on %s has exited; nothing to %s", st.AgentID, st.Host, m.Kind)
	case errors.Is(err, claims.ErrNoWorker):
		return fmt.Errorf("%s on %s publishes no record; nothing to %s", st.AgentID, st.Host, m.Kind)
	}
	return err
}

// Stamped is m with a fresh id, this host and the time: what a sender
// fills in whichever way the message goes.
func Stamped(m claims.Message) claims.Message {
	m.ID, m.Host, m.At = claims.Nonce(), look.Hostname(), look.UnixSeconds(time.Now())
	return m
}
