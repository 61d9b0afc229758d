package notify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"fleetwatch/model"
	"fleetwatch/workers"
)

// The ledger: a webhook every machine posts to (a team's Slack channel)
// gets each notice once from the whole fleet, not once from each
// machine's cockpit or watcher. After the machine's own record has
// claimed a message, its notices are claimed again in the claims backend
// (Options.Ledger: a create-only ref or key per notice and hook); those
// another machine claimed first are left out of the message, and a
// message left with none is recorded as sent elsewhere, not posted.
// The terminal and the desktop are each machine's own: not claimed.

// ledgerTimeout bounds the ledger's claim; past it, or when the backend
// cannot be reached, the message goes out as this machine alone decided
// (a notice twice across machines rather than none).
const ledgerTimeout = 10 * time.Second

// Elsewhere is the outcome of a message whose every notice another
// machine claimed for the same hook.
const Elsewhere = "elsewhere"

// claimShared claims c's notices in the ledger when t is shared; it
// returns what is left to send, false when nothing is (recorded so).
func (n *Notifier) claimShared(t *target, c claimed) (claimed, bool) {
	if n.opt.Ledger == nil || t.shared == "" || len(c.notices) == 0 {
		return c, true
	}
	keys := make([]string, len(c.notices))
	for i, x := range c.notices {
		keys[i] = ledgerKey(t.shared, fleetID(x))
	}
	ctx, cancel := context.WithTimeout(n.ctx, ledgerTimeout)
	taken, err := n.opt.Ledger.ClaimNotices(ctx, keys)
	cancel()
	if err != nil {
		n.sayOnce(t.name+" ledger", "cannot claim notices across machines ("+err.Error()+"); sending as this machine decides")
		return c, true
	}
	var left []model.Notice
	for i, x := range c.notices {
		if !taken[keys[i]] {
			left = append(left, x)
		}
	}
	switch {
	case len(left) == len(c.notices):
		return c, true
	case len(left) > 0:
		return claimed{message: n.message(left), msg: c.msg, notices: left}, true
	}
	l := Line{At: n.opt.Now(), To: t.name, State: Elsewhere, Msg: c.msg, Error: "sent from another machine (claimed first in the claims backend)"}
	release, err := n.rec.hold()
	if err != nil {
		n.say("%s: %v", t.name, err)
		return c, false
	}
	defer release()
	if err := n.rec.add(l); err != nil {
		n.say("%s: %v", t.name, err)
	}
	return c, false
}

// ledgerKey names notice id for hook in the ledger: a hash, so neither
// the hook's URL (a secret) nor the notice's text is written anywhere.
func ledgerKey(hook, id string) string {
	sum := sha256.Sum256([]byte(hook + "\n" + id))
	return hex.EncodeToString(sum[:20])
}

// fleetID is x's ID as every machine words it: a worker of this machine
// is "agent" in its own notices and "agent on host" in the others', so
// its own are named with the host too.
func fleetID(x model.Notice) string {
	if x.Subject != model.SubjectWorker || x.Key == "" || strings.Contains(x.Key, " on ") {
		return x.ID
	}
	return strings.Replace(x.ID, ":"+x.Key+"@", ":"+x.Key+" on "+workers.Hostname()+"@", 1)
}
