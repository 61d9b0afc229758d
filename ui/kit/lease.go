package kit

import (
	"time"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
)

// ReadAge is how old a view is: "7 s", then as span says it.
func ReadAge(sec float64) string {
	if sec < 60 {
		return Itoa(int(max(0, sec))) + " s"
	}
	return Coarse(sec)
}

// UnixOf is t in Unix seconds, as the board's clock.
func UnixOf(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// RemoteLease reports whether l was read from a remote backend.
func RemoteLease(l *model.Lease) bool { return l != nil && l.Backend != "" }

// HeldOn is " held on <host>" for a remote lease, "" for a lease file:
// every face that names a lease's owner says where it runs too.
func HeldOn(l *model.Lease) string {
	if !RemoteLease(l) {
		return ""
	}
	host := l.Host
	if host == "" {
		host = "an unnamed host"
	}
	return " held on " + termtext.Line(host)
}

// HeldOnAside is heldOn in brackets, for a sentence: " (held on gpu-box)".
func HeldOnAside(l *model.Lease) string {
	if !RemoteLease(l) {
		return ""
	}
	return " (" + HeldOn(l)[1:] + ")"
}

// FileRel is where a plan's file is in the checkout: a plan under a
// remote lease shows in progress but its file stays in the ready lane it
// was claimed from.
func FileRel(rel string, l *model.Lease) string {
	if RemoteLease(l) && l.Origin != "" {
		return l.Origin
	}
	return rel
}

// TimeLeft is how long an active lease still runs, "12m left", or for an
// inbox-held one, which never runs out, what it waits for.
func TimeLeft(l *model.Lease, now float64) string {
	if w := l.AwaitingText(); w != "" {
		return w
	}
	return Span(l.ExpiresAt-now) + " left"
}

// OwnerText is a lease's owner as the tables show it.
func OwnerText(l *model.Lease) string { return termtext.Line(l.AgentID) + HeldOn(l) }

// Force says whether acting on a plan overrides someone: another agent's
// lease, or an in-progress plan nobody holds.
func Force(agent string, lease *model.Lease, lane model.Lane) bool {
	if lease != nil {
		return lease.Corrupt != "" || lease.AgentID != agent
	}
	return lane == model.InProgress
}

// Holder says who holds a plan at now, as a sentence for a dialog.
func Holder(now float64, l *model.Lease) string {
	switch {
	case l == nil:
		return "No one holds it."
	case l.Corrupt != "":
		return "Its lease file is unreadable (" + l.Corrupt + ")."
	case l.Active(now):
		return l.AgentID + " holds it" + HeldOnAside(l) + ", " + TimeLeft(l, now) + "."
	}
	return l.AgentID + " held it" + HeldOnAside(l) + "; the lease expired " + Span(now-l.ExpiresAt) + " ago."
}

// Takes warns when confirming takes a plan from a live worker, for the
// operator acting as agent at now.
func Takes(agent string, now float64, l *model.Lease, what string) []string {
	if l != nil && l.Active(now) && l.AgentID != agent {
		return []string{"⚠ " + what + " takes it from " + l.AgentID + HeldOnAside(l) + ", which may still be working on it."}
	}
	return nil
}
