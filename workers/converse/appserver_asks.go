package converse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The agent's own requests: approvals of a command, a file change or
// more permissions, and questions for the user. Without Config.Asks each
// is allowed at once (the approval policy is then "never", so they are
// rare); with it each becomes an Asked event and waits for Answer.

// asMaxAsks bounds the requests waiting for the driver; more are
// declined at once.
const asMaxAsks = 64

// asPending is a request of the agent's waiting for the driver.
type asPending struct {
	id     json.RawMessage // the agent's request id, echoed in the reply
	turn   string
	answer func(Reply) (any, error)
}

// asRequest is what one request asks and how it is answered.
type asRequest struct {
	turn     string
	question string
	options  []Option // none: a free-text question
	answer   func(Reply) (any, error)
	auto     any // the answer without Asks
}

// asParams are the fields of the requests fleetwatch answers.
type asParams struct {
	TurnID      string          `json:"turnId"`
	ItemID      string          `json:"itemId"`
	Kind        string          `json:"kind"`
	Command     string          `json:"command"`
	Reason      string          `json:"reason"`
	GrantRoot   string          `json:"grantRoot"`
	Permissions json.RawMessage `json:"permissions"`
	Questions   []struct {
		ID       string `json:"id"`
		Header   string `json:"header"`
		Question string `json:"question"`
	} `json:"questions"`
}

// The options of an approval: the schema's decisions as their IDs.
var (
	asAccept  = Option{ID: "accept", Label: "allow once", Allow: true}
	asSession = Option{ID: "acceptForSession", Label: "allow for the session", Allow: true}
	asDecline = Option{ID: "decline", Label: "decline"}
)

// request answers or asks about one request of the agent's. Replies are
// written by the reader itself: an agent that floods requests without
// reading its stdin meets asWriteTimeout, not a goroutine for each.
func (c *appServer) request(m asMsg) {
	var p asParams
	if len(m.Params) > 0 && json.Unmarshal(m.Params, &p) != nil {
		c.logf("app-server: refused the agent's %s: its fields are not the schema's", asClip(m.Method, 60))
		_ = c.rpc.refuse(m.ID, -32602, "fleetwatch could not read the request's params")
		return
	}
	r, ok := c.requestFor(m.Method, p)
	if !ok {
		c.logf("app-server: refused the agent's %s: fleetwatch does not handle it", asClip(m.Method, 60))
		_ = c.rpc.refuse(m.ID, -32601, "fleetwatch does not handle "+asClip(m.Method, 60))
		return
	}
	if !c.cfg.Asks || r.answer == nil {
		_ = c.rpc.reply(m.ID, r.auto)
		return
	}
	c.mu.Lock()
	if len(c.asks) >= asMaxAsks {
		c.mu.Unlock()
		c.logf("app-server: declined the agent's %s: %d requests already wait", m.Method, asMaxAsks)
		if res, err := r.answer(Reply{Deny: true}); err == nil {
			_ = c.rpc.reply(m.ID, res)
		}
		return
	}
	c.nextAsk++
	id := "codex-" + strconv.Itoa(c.nextAsk)
	c.asks[id] = &asPending{id: bytes.TrimSpace(m.ID), turn: r.turn, answer: r.answer}
	c.mu.Unlock()
	c.emit(Event{Kind: Asked, Turn: r.turn, Ask: &Ask{ID: id, Question: r.question, Options: r.options}})
}

// requestFor is how the request method with params is answered; false
// for one fleetwatch does not handle (refused).
func (c *appServer) requestFor(method string, p asParams) (asRequest, bool) {
	r := asRequest{turn: p.TurnID}
	reason := ""
	if p.Reason != "" {
		reason = " (" + asClip(p.Reason, 300) + ")"
	}
	switch method {
	case "item/commandExecution/requestApproval":
		r.question = asClip("run "+p.Command, asToolText) + reason
		r.options = []Option{asAccept, asSession, asDecline}
		if p.Kind != "" && p.Kind != "command" {
			r.options = []Option{asAccept, asDecline} // input to a terminal, a person's command: once only
		}
		r.answer, r.auto = asDecide(r.options, asDecision), asDecision("accept")
	case "item/fileChange/requestApproval":
		c.mu.Lock()
		files := c.files[p.ItemID]
		c.mu.Unlock()
		what := "change " + strings.Join(files, ", ")
		if p.GrantRoot != "" {
			what = "write under " + p.GrantRoot
		}
		r.question = asClip(what, asToolText) + reason
		r.options = []Option{asAccept, asSession, asDecline}
		r.answer, r.auto = asDecide(r.options, asDecision), asDecision("accept")
	case "item/permissions/requestApproval":
		r.question = asClip("grant "+string(p.Permissions), asToolText) + reason
		r.options = []Option{asAccept, asSession, asDecline}
		grant := asGrant(p.Permissions)
		r.answer, r.auto = asDecide(r.options, grant), grant("accept")
	case "item/tool/requestUserInput":
		r.question, r.answer, r.auto = asQuestions(p)
	case "mcpServer/elicitation/request":
		// fleetwatch configures no MCP server that would ask a person.
		r.auto = map[string]any{"action": "decline", "content": nil, "_meta": nil}
	default:
		return r, false
	}
	return r, true
}

// asDecision is an approval's result for the option chosen.
func asDecision(option string) any { return map[string]any{"decision": option} }

// asGrant is a permissions request's result: what it asked for, for the
// turn or the session, or nothing when declined.
func asGrant(asked json.RawMessage) func(string) any {
	return func(option string) any {
		switch option {
		case "accept":
			return map[string]any{"permissions": asked, "scope": "turn"}
		case "acceptForSession":
			return map[string]any{"permissions": asked, "scope": "session"}
		}
		return map[string]any{"permissions": map[string]any{}, "scope": "turn"}
	}
}

// asDecide answers with result for the option a Reply picks (decline
// for Deny); an option the request does not offer is an error.
func asDecide(options []Option, result func(string) any) func(Reply) (any, error) {
	return func(r Reply) (any, error) {
		if r.Deny {
			return result(asDecline.ID), nil
		}
		for _, o := range options {
			if o.ID == r.Option {
				return result(o.ID), nil
			}
		}
		return nil, fmt.Errorf("%q is not an option of this request (%s)", asClip(r.Option, 60), asOptionIDs(options))
	}
}

func asOptionIDs(options []Option) string {
	ids := make([]string, len(options))
	for i, o := range options {
		ids[i] = o.ID
	}
	return strings.Join(ids, ", ")
}

// asQuestions is a request for the user's input: its questions in one
// line, answered with the reply's text for each (nothing when denied, or
// without Asks: no one is there to answer).
func asQuestions(p asParams) (string, func(Reply) (any, error), any) {
	var q []string
	for _, x := range p.Questions {
		if len(q) < 20 {
			q = append(q, strings.TrimSpace(x.Header+" "+x.Question))
		}
	}
	answer := func(r Reply) (any, error) {
		answers := map[string]any{}
		for _, x := range p.Questions {
			if !r.Deny && x.ID != "" {
				answers[x.ID] = map[string]any{"answers": []string{r.Text}}
			}
		}
		return map[string]any{"answers": answers}, nil
	}
	return asClip(strings.Join(q, " / "), asToolText), answer, map[string]any{"answers": map[string]any{}}
}

// withdraw drops the Ask for the agent's request id: the agent resolved
// it itself (an interrupt, a turn that ended).
func (c *appServer) withdraw(id json.RawMessage) {
	id = bytes.TrimSpace(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, p := range c.asks {
		if len(id) > 0 && bytes.Equal(p.id, id) {
			delete(c.asks, k)
		}
	}
}
