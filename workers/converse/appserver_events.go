package converse

import (
	"encoding/json"
	"strconv"
	"strings"
)

// What the app-server notifies, as Events. Fields are read leniently (a
// missing one is empty) and a message whose fields have the wrong types is
// logged and skipped: the agent's bytes are never trusted.

// asTurn is a Turn of the schema, the fields fleetwatch reads.
type asTurn struct {
	ID     string `json:"id"`
	Status string `json:"status"` // completed, interrupted, failed, inProgress
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// asItem is a ThreadItem, the fields of the kinds fleetwatch reads.
type asItem struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Command string `json:"command"` // commandExecution
	Changes []struct {
		Path string `json:"path"`
	} `json:"changes"` // fileChange
	Text   string `json:"text"`   // agentMessage
	Server string `json:"server"` // mcpToolCall
	Tool   string `json:"tool"`   // mcpToolCall, dynamicToolCall
	Query  string `json:"query"`  // webSearch
	// Status and ExitCode are a tool's outcome once it completes.
	Status   string `json:"status"`
	ExitCode *int   `json:"exitCode"`
}

// asNote holds the fields the notifications fleetwatch reads carry.
type asNote struct {
	ThreadID   string  `json:"threadId"`
	TurnID     string  `json:"turnId"`
	Turn       *asTurn `json:"turn"`
	Item       *asItem `json:"item"`
	TokenUsage *struct {
		Total asTokens `json:"total"`
	} `json:"tokenUsage"`
	RequestID json.RawMessage `json:"requestId"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error"`
	WillRetry bool `json:"willRetry"`
}

// asTokens is a TokenUsageBreakdown.
type asTokens struct {
	Input      int64 `json:"inputTokens"` // cached input included, as OpenAI counts it
	Cached     int64 `json:"cachedInputTokens"`
	CacheWrite int64 `json:"cacheWriteInputTokens"`
	Output     int64 `json:"outputTokens"` // reasoning included
}

// asNotes are the notifications fleetwatch reads; the others (status
// changes, deltas, rate limits, warnings) are not decoded at all.
var asNotes = map[string]bool{"turn/started": true, "turn/completed": true, "item/started": true, "item/completed": true,
	"thread/tokenUsage/updated": true, "serverRequest/resolved": true, "error": true}

func (c *appServer) notification(m asMsg) {
	if !asNotes[m.Method] {
		return
	}
	var n asNote
	if len(m.Params) > 0 && json.Unmarshal(m.Params, &n) != nil {
		c.logf("app-server: skipped the agent's %s: its fields are not the schema's", asClip(m.Method, 60))
		return
	}
	c.mu.Lock()
	other := n.ThreadID != "" && c.thread != "" && n.ThreadID != c.thread
	c.mu.Unlock()
	if other {
		return // a sub-agent's thread: its turns are not the conversation's
	}
	switch m.Method {
	case "turn/started":
		c.turnStarted(n.Turn)
	case "turn/completed":
		c.turnCompleted(n.Turn)
	case "item/started", "item/completed":
		c.item(n.Item, n.TurnID, m.Method == "item/completed")
	case "thread/tokenUsage/updated":
		if n.TokenUsage != nil {
			t := n.TokenUsage.Total
			tok := &Tokens{Input: t.Input, Output: t.Output, CacheRead: t.Cached, CacheWrite: t.CacheWrite}
			c.mu.Lock()
			c.usage = tok
			c.mu.Unlock()
			c.emit(Event{Kind: Usage, Turn: n.TurnID, Tokens: tok})
		}
	case "serverRequest/resolved":
		c.withdraw(n.RequestID)
	case "error":
		if n.Error != nil {
			c.logf("app-server: error (retrying: %v): %s", n.WillRetry, asClip(n.Error.Message, 300))
		}
	}
}

func (c *appServer) turnStarted(t *asTurn) {
	if t == nil || t.ID == "" {
		return
	}
	c.mu.Lock()
	if c.turn == "" && t.ID != c.ended {
		c.turn = t.ID
	}
	c.mu.Unlock()
	c.emit(Event{Kind: TurnStarted, Turn: t.ID})
}

func (c *appServer) turnCompleted(t *asTurn) {
	if t == nil || t.ID == "" {
		return
	}
	ev := Event{Kind: TurnEnded, Turn: t.ID, Stop: StopDone}
	switch t.Status {
	case "completed":
	case "interrupted":
		ev.Stop = StopCancelled
	default:
		ev.Stop, ev.Text = StopError, "the turn ended "+asClip(t.Status, 40)
		if t.Error != nil && t.Error.Message != "" {
			ev.Text = asClip(t.Error.Message, 1000)
		}
	}
	c.mu.Lock()
	if c.turn == t.ID || c.turn == "" {
		c.turn = ""
	}
	c.ended = t.ID
	for id, p := range c.asks {
		if p.turn == t.ID {
			delete(c.asks, id) // the agent takes no answer for an ended turn
		}
	}
	clear(c.files)
	clear(c.tools)
	if c.usage != nil {
		tok := *c.usage
		ev.Tokens = &tok
	}
	c.mu.Unlock()
	c.emit(ev)
}

// asToolText bounds a tool's title.
const asToolText = 2000

// item turns a thread item into a Tool or Message event: a tool when it
// starts, and again when it completes only if that says something new (it
// failed or was declined, or its start was never seen), so that the
// driver's log has a line for each call, not two. The kinds fleetwatch
// does not show (the user's own messages, reasoning, plans) are skipped.
func (c *appServer) item(it *asItem, turn string, done bool) {
	if it == nil {
		return
	}
	if it.Type == "agentMessage" {
		if done { // its text is whole once it completes
			c.emit(Event{Kind: Message, Turn: turn, Text: asClip(it.Text, 1<<20)})
		}
		return
	}
	ev, ok := asToolEvent(it)
	if !ok {
		return
	}
	ev.Turn = turn
	c.mu.Lock()
	seen := c.tools[it.ID]
	if !done && it.ID != "" && len(c.tools) < 10000 {
		c.tools[it.ID] = true
	}
	if it.Type == "fileChange" && len(ev.Files) > 0 && len(c.files) < 10000 {
		c.files[it.ID] = ev.Files
	}
	c.mu.Unlock()
	if done && seen {
		outcome := it.Status
		if it.ExitCode != nil && *it.ExitCode != 0 && outcome == "completed" {
			outcome = "exit " + strconv.Itoa(*it.ExitCode)
		}
		if outcome == "completed" || outcome == "" {
			return
		}
		ev.Text += " (" + asClip(outcome, 40) + ")"
	}
	c.emit(ev)
}

// asToolEvent is a tool item's Tool event; false for an item that is no
// tool.
func asToolEvent(it *asItem) (Event, bool) {
	ev := Event{Kind: Tool}
	switch it.Type {
	case "commandExecution":
		ev.Text = asClip(it.Command, asToolText)
	case "fileChange":
		for _, ch := range it.Changes {
			if ch.Path != "" && len(ev.Files) < 1000 {
				ev.Files = append(ev.Files, ch.Path)
			}
		}
		ev.Text = asClip("edit "+strings.Join(ev.Files, ", "), asToolText)
	case "mcpToolCall":
		ev.Text = asClip(it.Server+"/"+it.Tool, asToolText)
	case "dynamicToolCall":
		ev.Text = asClip(it.Tool, asToolText)
	case "webSearch":
		ev.Text = asClip("web search: "+it.Query, asToolText)
	default:
		return ev, false
	}
	return ev, true
}
