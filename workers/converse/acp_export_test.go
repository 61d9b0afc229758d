package converse

import "time"

// SetACPTimes shortens the ACP conversation's handshake bound and cancel
// grace for a test, until it ends.
func SetACPTimes(handshake, grace time.Duration) (restore func()) {
	h, g := acpHandshake, acpCancelGrace
	acpHandshake, acpCancelGrace = handshake, grace
	return func() { acpHandshake, acpCancelGrace = h, g }
}
