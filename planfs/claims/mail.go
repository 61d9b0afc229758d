package claims

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// A person's messages to a running worker travel as stop requests do: the
// sender writes them beside the worker's record (Fleet.Send), the driver's
// next publish reads them and takes them away. Delivery is at least once:
// a message read by a publish whose removal did not take comes back at the
// next one, so the driver drops an id it has had (workers/publish.go).
// A message is never taken away unread while its run lives, and a publish
// only ever hands over the messages for its own run.

// Bounds of mail: how many messages wait for one worker, and the pending
// list as stored (MaxMail messages at their bounds, with JSON's escapes,
// fit in it with room to spare).
const (
	MaxMail    = 16
	MaxMailBox = 256 << 10
)

// ErrMailFull is a Send to a worker that has MaxMail messages it has not
// read yet: its driver is not publishing, or not keeping up.
var ErrMailFull = fmt.Errorf("its mailbox holds %d messages not yet read; wait for the worker to read them", MaxMail)

// Inbound is what a publish brings back to the driver: a stop request and
// the messages for its run (in the order sent), and, when the pending list
// could not be read, why (it is replaced all the same: nothing can mend it).
type Inbound struct {
	Stop    *StopRequest
	Mail    []Message
	Problem string
}

// Bounds of an ask as published: faces show the question on one line and
// the options as a short list.
const (
	MaxAskOptions = 8
	maxQuestion   = 1024
)

// Bounded is a with its question one clipped line and at most
// MaxAskOptions options, each clipped.
func (a AskRecord) Bounded() AskRecord {
	a.ID, a.Question = Clip(a.ID, maxField), Clip(a.Question, maxQuestion)
	opts := a.Options[:min(len(a.Options), MaxAskOptions)]
	a.Options = nil
	for _, o := range opts {
		a.Options = append(a.Options, AskOption{ID: Clip(o.ID, maxField), Label: Clip(o.Label, maxField), Allow: o.Allow})
	}
	return a
}

// EncodeMail is the pending list as stored: JSON without HTML escapes,
// which would make a note of <> six times its size.
func EncodeMail(box []Message) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if box == nil {
		box = []Message{}
	}
	_ = enc.Encode(box)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// DecodeMail reads a pending list another machine stored: at most
// MaxMailBox bytes, each message bounded, those that are no message
// dropped. name says where it came from, for the error.
func DecodeMail(name string, data []byte) ([]Message, error) {
	if len(data) > MaxMailBox {
		return nil, fmt.Errorf("mail %s: %d bytes, more than %d", name, len(data), MaxMailBox)
	}
	var raw []Message
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("mail %s: %v", name, err)
	}
	box := make([]Message, 0, min(len(raw), MaxMail))
	for _, m := range raw {
		if m = m.Bounded(); m.Problem() == "" && m.Run != "" {
			box = append(box, m)
		}
	}
	return box, nil
}

// MailFor is box's messages for run, in order, at most MaxMail; none for
// no run.
func MailFor(box []Message, run string) []Message {
	var out []Message
	for _, m := range box {
		if m.Run == run && run != "" && len(out) < MaxMail {
			out = append(out, m.Bounded())
		}
	}
	return out
}

// AddMail is the pending list after m (already bounded, its Run set) is
// added to box: the messages for other runs are dropped (their runs are
// over), a message already there is not added twice (added is false), and
// a list already holding MaxMail for m's run is refused with ErrMailFull.
func AddMail(box []Message, m Message) (out []Message, added bool, err error) {
	out = MailFor(box, m.Run)
	if slices.ContainsFunc(out, func(o Message) bool { return o.ID == m.ID }) {
		return out, false, nil
	}
	if len(out) >= MaxMail {
		return out, false, ErrMailFull
	}
	out = append(out, m)
	if len(EncodeMail(out)) > MaxMailBox {
		return out[:len(out)-1], false, ErrMailFull
	}
	return out, true, nil
}

// CheckMail is m bounded, or why it cannot be sent to agent on host.
func CheckMail(host, agent string, m Message) (Message, error) {
	m = m.Bounded()
	if p := m.Problem(); p != "" {
		return m, fmt.Errorf("message to %s on %s: %s: %w", Clip(agent, 80), Clip(host, 80), p, ErrBadMessage)
	}
	return m, nil
}

// ErrBadMessage is a message Send refuses as it stands (Message.Problem).
var ErrBadMessage = errors.New("not a message")

// MailWatcher is a Fleet that says when a message or a stop may be
// waiting for a worker, so its driver publishes (and hears it) then rather
// than at its next heartbeat, which can be a minute away.
type MailWatcher interface {
	// MailChanges receives, soon after a Send or a RequestStop to host's
	// agent, until ctx ends; then it is closed. A word may come with
	// nothing waiting: it costs one publish.
	MailChanges(ctx context.Context, host, agent string) <-chan struct{}
}
