package planfs

import "github.com/fleetwatch/fleetwatch/model"

// Actor is who asks a verb to act on a lease: an agent id, the token of the
// lease it took (empty for an operator, or an agent that never held one),
// and whether it overrides ownership.
//
// Fencing is by token: two processes may share an agent id (a stopped driver
// and the operator who recovered its plan under the same id), and only the
// one holding the lease on disk may renew it or move its plan. A lease
// without a token (anchor's) or an actor without one falls back to the agent
// id rule.
type Actor struct {
	AgentID string
	Token   string
	Force   bool
	// Reason is why, for the event log (a park's reason, a worker's
	// release).
	Reason string
}

// Agent is an actor known by its agent id alone.
func Agent(id string) Actor { return Actor{AgentID: id} }

// Because is a with reason as its Reason.
func (a Actor) Because(reason string) Actor {
	a.Reason = reason
	return a
}

// Forced is a with Force set.
func (a Actor) Forced(force bool) Actor {
	a.Force = a.Force || force
	return a
}

// holds reports whether a is the holder of l, by token when both carry one,
// else by agent id. Force does not count: it overrides, it does not hold.
func (a Actor) holds(l *model.Lease) bool {
	if l == nil || l.Corrupt != "" {
		return false
	}
	if a.Token != "" && l.Token != "" {
		return a.Token == l.Token
	}
	return a.AgentID == l.AgentID
}

// HeldBy reports whether l is a's lease: the check every verb makes, for a
// face that wants to know before it asks.
func HeldBy(l *model.Lease, a Actor) bool { return a.holds(l) }

// Claimed is a plan a worker now holds: its rel in in-progress/ and the
// token of its lease, which the worker presents to every later verb on it.
type Claimed struct {
	Rel, Token string
}

// Claim moves a ready plan to in-progress/ for agent and returns its new rel
// (see claim for the protocol).
func (t *Tree) Claim(rel, agent string, ttl float64) (string, error) {
	return t.claim(rel, agent, newToken(), ttl)
}

// ClaimHeld is Claim, also returning the token of the lease taken.
func (t *Tree) ClaimHeld(rel, agent string, ttl float64) (Claimed, error) {
	token := newToken()
	dst, err := t.claim(rel, agent, token, ttl)
	return Claimed{Rel: dst, Token: token}, err
}
