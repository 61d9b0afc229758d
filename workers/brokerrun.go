package workers

import (
	"fmt"
	"path"
	"strings"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/contain"
	"github.com/fleetwatch/fleetwatch/workers/converse"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// answer performs one agent request on r's plan, if it is the agent's
// own and carries its lease's token.
func (d *Driver) answer(r *running, q contain.Ask) {
	if q.Req.Verb == contain.AskQuestion {
		d.question(r, q)
		return
	}
	rep := d.perform(r, q.Req)
	if rep.Error != "" {
		d.Log.Printf("agent asked to %s %s: refused: %s", q.Req.Verb, q.Req.Plan, rep.Error)
	} else {
		d.Log.Printf("agent asked to %s %s: done (%s)", q.Req.Verb, r.job.Rel, rep.Plan)
	}
	q.Reply <- rep
}

func (d *Driver) perform(r *running, req contain.AgentRequest) contain.AgentReply {
	rel, me := r.job.Rel, r.me
	if me.Token != "" && req.Token != me.Token {
		return contain.AgentReply{Error: fmt.Sprintf("the token does not hold %s's lease", rel)}
	}
	if !d.ownPlan(r, req.Plan) {
		return contain.AgentReply{Error: fmt.Sprintf("an agent acts only on its own plan, %s", rel)}
	}
	fail := func(err error) contain.AgentReply { return contain.AgentReply{Error: tree.ErrText(err)} }
	switch req.Verb {
	case contain.AskHeartbeat:
		if lost, _ := d.heartbeat(rel, me); lost != "" {
			return contain.AgentReply{Error: "lease lost: " + lost}
		}
		return contain.AgentReply{Plan: d.Tree.Abs(rel)}
	case contain.AskComplete, contain.AskPark, contain.AskRelease:
	default:
		return contain.AgentReply{Error: fmt.Sprintf("%q is not a verb an agent may ask for", req.Verb)}
	}
	if !d.holds(rel, me) {
		return contain.AgentReply{Error: fmt.Sprintf("%s is no longer held by this run", rel)}
	}
	// What the agent committed goes with the plan it hands on: a plan sent
	// for review without it would be reviewed and landed empty.
	if err := d.bringBranch(r); err != nil && req.Verb == contain.AskComplete {
		return contain.AgentReply{Error: fmt.Sprintf("%s stays with you: your commits could not be brought in (%s); fix your branch and ask again", rel, tree.ErrText(err))}
	}
	dst, refusal, err := d.handOnAsked(r, req)
	if refusal != "" {
		return contain.AgentReply{Error: refusal}
	}
	if err != nil {
		return fail(err)
	}
	r.handedOn = dst
	return contain.AgentReply{Plan: d.Tree.Abs(dst)}
}

// question takes the agent's question to the operator: it waits, like a
// conversation's permission request, for a person's answer, which is the
// reply.
func (d *Driver) question(r *running, q contain.Ask) {
	text := strings.TrimSpace(q.Req.Question)
	switch {
	case r.me.Token != "" && q.Req.Token != r.me.Token:
		q.Reply <- contain.AgentReply{Error: fmt.Sprintf("the token does not hold %s's lease", r.job.Rel)}
	case text == "":
		q.Reply <- contain.AgentReply{Error: "ask: no question"}
	case len(r.asks) >= maxAsks:
		q.Reply <- contain.AgentReply{Error: fmt.Sprintf("%d questions already wait for an answer", len(r.asks))}
	default:
		r.questions++
		a := &converse.Ask{ID: fmt.Sprintf("q%d", r.questions), Question: text}
		d.asked(r, a, q.Reply)
	}
}

// maxAsks bounds the questions one run has waiting.
const maxAsks = 16

// handOnAsked moves r's plan on as the agent asked: complete, park or
// release. refusal answers a --to its verb does not send plans to.
func (d *Driver) handOnAsked(r *running, req contain.AgentRequest) (dst, refusal string, err error) {
	rel, me := r.job.Rel, r.me
	switch req.Verb {
	case contain.AskComplete:
		to, refusal := askedLane(model.Complete, "complete", req.To)
		if refusal != "" {
			return "", refusal, nil
		}
		dst, err = d.completePlan(rel, to, me)
	case contain.AskPark:
		to, refusal := askedLane(model.Park, "park", req.To)
		if refusal != "" {
			return "", refusal, nil
		}
		why := cmpReason(req.Reason, "parked by the agent")
		if d.Keeper != nil {
			dst, err = d.Keeper.Park(to, why)
		} else {
			dst, err = d.Tree.Park(rel, to, me.Because(why))
		}
	case contain.AskRelease:
		dst, err = d.releasePlan(rel, me, cmpReason(req.Reason, "released by the agent"))
	}
	return dst, "", err
}

// askedLane is the lane the agent's --to names when verb (called name)
// sends plans there; otherwise refusal says which it must be.
func askedLane(verb model.Verb, name, to string) (model.Lane, string) {
	lane, ok := model.ParseLane(to)
	if !ok || !model.RuleOf(verb).Sends(lane) {
		return lane, fmt.Sprintf("%s: --to must be %s, not %q", name, model.Alternatives(model.RuleOf(verb).To), to)
	}
	return lane, ""
}

func cmpReason(r, def string) string {
	if r = strings.TrimSpace(r); r != "" {
		return r
	}
	return def
}

// ownPlan reports whether name (a rel, a path or a slug, as the agent gave
// it) is r's plan.
func (d *Driver) ownPlan(r *running, name string) bool {
	rel := r.job.Rel
	name = strings.TrimSpace(name)
	switch name {
	case "", rel, d.Tree.Abs(rel), r.job.PlanFile, planfs.Dir + "/" + rel:
		return name != ""
	}
	return name == model.SlugOf(path.Base(rel))
}
