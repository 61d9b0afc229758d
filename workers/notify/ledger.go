package notify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// The ledger: a webhook every machine posts to (a team's Slack channel)
// gets each notice once from the whole fleet, not once from each
// machine's cockpit or watcher. After the machine's own record has
// claimed a message, its notices are claimed again in the claims backend
// (Options.Ledger: a create-only ref or key per notice and hook), and
// after the post went out the claims are confirmed. A notice another
// machine claimed counts as sent from there only once its claimer
// confirms it: until then this machine waits (confirmWait), then takes
// the claim over, posts and confirms. Anyone with push access can make a
// claim; none can silence a notice with one. The terminal and the desktop
// are each machine's own: not claimed.

// ledgerTimeout bounds each of the ledger's calls; past it, or when the
// backend cannot be reached, the message goes out as this machine alone
// decided (a notice twice across machines rather than none).
const ledgerTimeout = 10 * time.Second

// confirmWait is how long a claim another machine made may go
// unconfirmed before this machine takes it over; takeOvers bounds the
// waits: a take-over lost to a third machine waits once more for that
// one, then the notice is posted regardless.
const takeOvers = 2

var (
	confirmWait = 5 * time.Second
	// confirmPoll is how often a waiting machine reads the claims it
	// waits on.
	confirmPoll = 500 * time.Millisecond
)

// Elsewhere is the outcome of a message whose every notice another
// machine posted, and confirmed, to the same hook.
const Elsewhere = "elsewhere"

// shareClaim is a message's notices as claimed in the ledger: the
// message left to post, and the claims of it to confirm once posted
// (key → claim).
type shareClaim struct {
	claimed
	mine map[string]string
}

// claimShared claims c's notices in the ledger when t is shared, waits
// for the confirmations of those another machine claimed and takes over
// the claims left unconfirmed; it returns what is left to send, false
// when nothing is (recorded so).
func (n *Notifier) claimShared(t *target, c claimed) (shareClaim, bool) {
	if n.opt.Ledger == nil || t.shared == "" || len(c.notices) == 0 {
		return shareClaim{claimed: c}, true
	}
	keys := make([]string, len(c.notices))
	want := map[string]string{}
	for i, x := range c.notices {
		keys[i] = ledgerKey(t.shared, fleetID(x))
		want[keys[i]] = ""
	}
	mine, err := n.settleShared(want)
	if err != nil && n.ctx.Err() == nil { // closing cuts the wait short: nothing to say
		n.sayOnce(t.name+" ledger", "cannot claim notices across machines ("+err.Error()+"); sending as this machine decides")
	}
	left := unsettled(c.notices, keys, mine, err)
	switch {
	case len(left) == len(c.notices):
		return shareClaim{claimed: c, mine: mine}, true
	case len(left) > 0:
		return shareClaim{claimed: claimed{message: n.message(left), msg: c.msg, notices: left}, mine: mine}, true
	}
	n.recordElsewhere(t, c)
	return shareClaim{}, false
}

// unsettled are the notices (by their ledger keys) this machine is to
// post: those in mine, or all of them when settling failed (err).
func unsettled(notices []model.Notice, keys []string, mine map[string]string, err error) []model.Notice {
	var left []model.Notice
	for i, x := range notices {
		if _, posted := mine[keys[i]]; posted || err != nil {
			left = append(left, x)
		}
	}
	return left
}

// recordElsewhere records c as sent from another machine, which confirmed
// its post in the claims backend.
func (n *Notifier) recordElsewhere(t *target, c claimed) {
	l := Line{At: n.opt.Now(), To: t.name, State: Elsewhere, Msg: c.msg, Error: "sent from another machine (its post confirmed in the claims backend)"}
	release, err := n.rec.hold()
	if err != nil {
		n.say("%s: %v", t.name, err)
		return
	}
	defer release()
	if err := n.rec.add(l); err != nil {
		n.say("%s: %v", t.name, err)
	}
}

// settleShared claims want's keys and settles each: this machine's to
// post (in mine, key → claim; "" when posted unclaimed, after takeOvers
// waits), or another's that confirmed its post (left out). On an error
// mine holds the claims made before it, to confirm: the caller posts all.
func (n *Notifier) settleShared(want map[string]string) (mine map[string]string, err error) {
	mine = map[string]string{}
	for round := 0; len(want) > 0; round++ {
		got, err := n.ledgerClaim(want)
		if err != nil {
			return mine, err
		}
		wait := map[string]string{}
		for k := range want {
			switch c := got[k]; {
			case c.Mine:
				mine[k] = c.Rev
			case !c.Sent:
				wait[k] = c.Rev
			}
		}
		if round == takeOvers {
			for k := range wait {
				mine[k] = "" // waited enough: posted, and not confirmed
			}
			return mine, nil
		}
		if want, err = n.awaitSent(wait); err != nil {
			return mine, err
		}
	}
	return mine, nil
}

func (n *Notifier) ledgerClaim(want map[string]string) (map[string]claims.NoticeClaim, error) {
	ctx, cancel := context.WithTimeout(n.ctx, ledgerTimeout)
	defer cancel()
	return n.opt.Ledger.ClaimNotices(ctx, want)
}

// awaitSent reads the claims of wait (key → claim seen) until each is
// confirmed or confirmWait passed; it returns those still unconfirmed,
// each with the claim that holds it now, to take over.
func (n *Notifier) awaitSent(wait map[string]string) (map[string]string, error) {
	end := time.Now().Add(confirmWait)
	for len(wait) > 0 && time.Now().Before(end) && n.ctx.Err() == nil {
		select {
		case <-time.After(min(confirmPoll, time.Until(end))):
		case <-n.ctx.Done():
		}
		ctx, cancel := context.WithTimeout(n.ctx, ledgerTimeout)
		have, err := n.opt.Ledger.NoticeClaims(ctx, slices.Sorted(maps.Keys(wait)))
		cancel()
		if err != nil {
			return nil, err
		}
		for k := range wait {
			if c := have[k]; c.Sent {
				delete(wait, k)
			} else {
				wait[k] = c.Rev
			}
		}
	}
	return wait, nil
}

// confirmShared confirms in the ledger the claims of a message posted.
func (n *Notifier) confirmShared(t *target, mine map[string]string) {
	for k, rev := range mine {
		if rev == "" {
			delete(mine, k)
		}
	}
	if len(mine) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(n.ctx, ledgerTimeout)
	defer cancel()
	if err := n.opt.Ledger.ConfirmNotices(ctx, mine); err != nil {
		n.sayOnce(t.name+" confirm", "cannot confirm posts across machines ("+err.Error()+"); other machines post them again after "+confirmWait.String())
	}
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
	return strings.Replace(x.ID, ":"+x.Key+"@", ":"+x.Key+" on "+look.Hostname()+"@", 1)
}
