package converse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	acp "github.com/coder/acp-go-sdk"
)

// acpMaxMessage bounds one coalesced agent message; the rest is dropped.
const acpMaxMessage = 256 << 10

// acpMaxAsks bounds the permission requests waiting at once: an agent
// asking without end gets "cancelled" beyond it.
const acpMaxAsks = 64

// acpMaxTools bounds the tool titles a turn remembers.
const acpMaxTools = 1024

// acpClient is the conversation as the SDK's Client: what the agent asks
// of fleetwatch. It offers no files or terminals (initialize said so):
// those requests are refused.
type acpClient struct{ c *acpConv }

var errNotOffered = errors.New("fleetwatch offers no files or terminals: the agent works in its own folder")

func (acpClient) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, errNotOffered
}

func (acpClient) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, errNotOffered
}

func (acpClient) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, errNotOffered
}

func (acpClient) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, errNotOffered
}

func (acpClient) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, errNotOffered
}

func (acpClient) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, errNotOffered
}

func (acpClient) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, errNotOffered
}

// HandleExtensionMethod sees the pump's marks and its sentinel (every
// update read before the agent's output ended has been handled).
func (a acpClient) HandleExtensionMethod(_ context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case a.c.eof:
		close(a.c.drained)
		return nil, nil
	case a.c.mark:
		a.c.markHandled(params)
		return nil, nil
	}
	return nil, acp.NewMethodNotFound(method)
}

// SessionUpdate turns an update into Events: the agent's message chunks
// coalesced into one Message each, tool calls, and the session's cost.
// Plans, thoughts, commands and modes are not the driver's.
func (a acpClient) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	c := a.c
	if s := c.Session(); s != "" && string(n.SessionId) != s {
		c.logf("acp: an update for session %s, not this one", oneLine(string(n.SessionId), 80))
		return nil
	}
	u := n.Update
	if u.AgentMessageChunk != nil {
		if e := c.chunk(u.AgentMessageChunk); e != nil {
			c.emit(*e)
		}
		return nil
	}
	var e *Event
	switch {
	case u.ToolCall != nil:
		e = c.tool(u.ToolCall.ToolCallId, &u.ToolCall.Title, u.ToolCall.Locations)
	case u.ToolCallUpdate != nil:
		e = c.tool(u.ToolCallUpdate.ToolCallId, u.ToolCallUpdate.Title, u.ToolCallUpdate.Locations)
	case u.UsageUpdate != nil && u.UsageUpdate.Cost != nil && u.UsageUpdate.Cost.Currency == "USD":
		// opencode's figure is the session's cost so far; its "used" is
		// the context's size, not tokens spent, so it is not a figure here.
		e = &Event{Kind: Usage, Tokens: &Tokens{USD: u.UsageUpdate.Cost.Amount}}
	default:
		return nil
	}
	c.mu.Lock()
	msg := c.flushLocked()
	e.Turn = c.turnID()
	c.mu.Unlock()
	if msg != nil {
		c.emit(*msg)
	}
	c.emit(*e)
	return nil
}

// chunk adds a message chunk to the message being streamed; a chunk of
// another message first hands over the one before.
func (c *acpConv) chunk(m *acp.SessionUpdateAgentMessageChunk) *Event {
	if m.Content.Text == nil {
		return nil
	}
	id := ""
	if m.MessageId != nil {
		id = *m.MessageId
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var done *Event
	if id != c.msgID {
		done = c.flushLocked()
		c.msgID = id
	}
	if room := acpMaxMessage - c.msg.Len(); room > 0 {
		t := m.Content.Text.Text
		c.msg.WriteString(t[:min(len(t), room)])
	}
	return done
}

// flushLocked is the message streamed so far as an Event, nil when none.
func (c *acpConv) flushLocked() *Event {
	if c.msg.Len() == 0 {
		return nil
	}
	e := &Event{Kind: Message, Turn: c.turnID(), Text: c.msg.String()}
	c.msg.Reset()
	return e
}

func (c *acpConv) turnID() string {
	if c.turn == nil {
		return ""
	}
	return c.turn.id
}

// tool is a Tool event for a tool call or its update: its title (the
// call's own, when an update omits it) and the paths it touches.
func (c *acpConv) tool(id acp.ToolCallId, title *string, locs []acp.ToolCallLocation) *Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	text := c.tools[id]
	if title != nil && *title != "" {
		text = oneLine(*title, 300)
		if _, ok := c.tools[id]; ok || len(c.tools) < acpMaxTools {
			c.tools[id] = text
		}
	}
	return &Event{Kind: Tool, Text: text, Files: locPaths(locs)}
}

// acpAsk is a permission request waiting for Answer.
type acpAsk struct {
	options []acp.PermissionOption
	answer  chan acp.RequestPermissionOutcome // room for one: the answer never waits
}

var acpCancelled = acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}}

// RequestPermission allows at once without cfg.Asks (the sandbox is the
// boundary); with it, the request becomes an Asked event and waits for
// Answer, an interrupt, or the connection's end.
func (a acpClient) RequestPermission(ctx context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	c := a.c
	if !c.cfg.Asks {
		o, ok := pickOption(p.Options, acp.PermissionOptionKindAllowOnce, acp.PermissionOptionKindAllowAlways)
		if !ok {
			c.logf("acp: a permission request with no allow option (%s): cancelled", oneLine(permissionQuestion(p.ToolCall), 200))
			return acp.RequestPermissionResponse{Outcome: acpCancelled}, nil
		}
		return selected(o), nil
	}
	ask, id, ok := c.addAsk(p.Options)
	if !ok {
		return acp.RequestPermissionResponse{Outcome: acpCancelled}, nil
	}
	defer c.running.Done()
	c.emit(Event{Kind: Asked, Turn: c.currentTurn(), Files: locPaths(p.ToolCall.Locations), Ask: &Ask{ID: id,
		Question: permissionQuestion(p.ToolCall), Options: askOptions(p.Options)}})
	select {
	case out := <-ask.answer:
		return acp.RequestPermissionResponse{Outcome: out}, nil
	case <-ctx.Done():
	case <-c.quit:
	}
	c.dropAsk(id)
	return acp.RequestPermissionResponse{Outcome: acpCancelled}, nil
}

// addAsk registers a waiting request; false once the conversation ended.
func (c *acpConv) addAsk(opts []acp.PermissionOption) (*acpAsk, string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.ended {
		return nil, "", false
	}
	if len(c.asks) >= acpMaxAsks {
		c.logf("acp: %d permission requests wait already: another is cancelled", len(c.asks))
		return nil, "", false
	}
	c.askSeq++
	id := fmt.Sprintf("acp-%d", c.askSeq)
	a := &acpAsk{options: opts, answer: make(chan acp.RequestPermissionOutcome, 1)}
	c.asks[id] = a
	c.running.Add(1)
	return a, id, true
}

func (c *acpConv) dropAsk(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.asks, id)
}

func (c *acpConv) currentTurn() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.turnID()
}

// Answer answers a waiting permission request: the option chosen, or for
// Deny a reject option (cancelled when the request offers none).
func (c *acpConv) Answer(id string, r Reply) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.asks[id]
	if a == nil {
		return ErrNoAsk
	}
	var out acp.RequestPermissionOutcome
	switch {
	case r.Option != "":
		o, ok := optionNamed(a.options, r.Option)
		if !ok {
			return fmt.Errorf("%q is not an option of request %s", oneLine(r.Option, 80), id)
		}
		out = selected(o).Outcome
	case r.Deny:
		out = acpCancelled
		if o, ok := pickOption(a.options, acp.PermissionOptionKindRejectOnce, acp.PermissionOptionKindRejectAlways); ok {
			out = selected(o).Outcome
		}
	default:
		return fmt.Errorf("request %s is a permission: answer with one of its options or deny it", id)
	}
	delete(c.asks, id)
	a.answer <- out
	return nil
}

// pickOption is the first option of the first kind in kinds offered.
func pickOption(opts []acp.PermissionOption, kinds ...acp.PermissionOptionKind) (acp.PermissionOption, bool) {
	for _, k := range kinds {
		for _, o := range opts {
			if o.Kind == k {
				return o, true
			}
		}
	}
	return acp.PermissionOption{}, false
}

func optionNamed(opts []acp.PermissionOption, id string) (acp.PermissionOption, bool) {
	for _, o := range opts {
		if string(o.OptionId) == id {
			return o, true
		}
	}
	return acp.PermissionOption{}, false
}

func selected(o acp.PermissionOption) acp.RequestPermissionResponse {
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
		Selected: &acp.RequestPermissionOutcomeSelected{Outcome: "selected", OptionId: o.OptionId}}}
}

// askOptions are a request's options as the driver shows them.
func askOptions(opts []acp.PermissionOption) []Option {
	var out []Option
	for _, o := range opts[:min(len(opts), 16)] {
		out = append(out, Option{ID: string(o.OptionId), Label: oneLine(o.Name, 100),
			Allow: o.Kind == acp.PermissionOptionKindAllowOnce || o.Kind == acp.PermissionOptionKindAllowAlways})
	}
	return out
}

// permissionQuestion is one line saying what the agent asks to do.
func permissionQuestion(t acp.ToolCallUpdate) string {
	kind, title := "a tool", ""
	if t.Kind != nil && *t.Kind != "" {
		kind = string(*t.Kind)
	}
	if t.Title != nil {
		title = *t.Title
	}
	if title == "" {
		return oneLine("The agent asks to use "+kind, 300)
	}
	return oneLine(fmt.Sprintf("The agent asks to %s: %s", kind, title), 300)
}

func locPaths(locs []acp.ToolCallLocation) []string {
	var out []string
	for _, l := range locs[:min(len(locs), 100)] {
		if l.Path != "" {
			out = append(out, l.Path)
		}
	}
	return out
}
