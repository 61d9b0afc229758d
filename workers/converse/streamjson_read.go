package converse

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// read reads the agent's stdout until it ends or breaks the protocol.
func (c *streamJSON) read(out io.Reader) {
	r := bufio.NewReaderSize(out, 64<<10)
	for {
		line, err := sjReadLine(r, streamJSONMaxLine)
		if err != nil && !errors.Is(err, io.EOF) {
			c.finish(err.Error())
			return
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if why := c.handle(line); why != "" {
				c.finish(why)
				return
			}
			// The reader waits here, not the agent's methods, when the
			// driver lags far behind: the agent then waits on its stdout.
			c.box.wait()
		}
		if err != nil {
			c.finish(sjOutputEnded)
			return
		}
	}
}

const sjOutputEnded = "the agent's output ended"

var sjErrLongLine = fmt.Errorf("a line of the agent's output is longer than %d MiB", streamJSONMaxLine>>20)

// sjReadLine is the next line of r without its newline, at most max bytes:
// a longer line is an error, read no further.
func sjReadLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		part, err := r.ReadSlice('\n')
		if len(line)+len(part) > max+1 {
			return nil, sjErrLongLine
		}
		line = append(line, part...)
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

// finish ends the conversation when the agent's stdout has ended: a turn
// cut short is a failure unless the driver closed the conversation.
func (c *streamJSON) finish(why string) {
	c.mu.Lock()
	switch {
	case why != sjOutputEnded:
		c.breakLocked(why)
	case c.busy && !c.over:
		c.breakLocked(sjOutputEnded + " during a turn")
	}
	c.over, c.busy = true, false
	c.why = why
	clear(c.asks)
	c.mu.Unlock()
	c.box.end()
	close(c.done)
}

func (c *streamJSON) doneReason() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return errors.New(c.why)
}

// handle reads one line; a reason when the conversation cannot go on.
func (c *streamJSON) handle(line []byte) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var f sjFields
	if json.Unmarshal(line, &f) != nil || f == nil {
		if !c.started {
			return "the agent's output is not stream-json: " + strconv.Quote(sjLine(string(line), 120))
		}
		if c.junk++; c.junk == 1 {
			c.logf("claude stream-json: a line that is not JSON: %q", sjLine(string(line), 120))
		}
		if c.junk >= streamJSONJunk {
			return fmt.Sprintf("%d lines in a row of the agent's output are not JSON", c.junk)
		}
		return ""
	}
	c.junk = 0
	switch f.str("type") {
	case "system":
		if f.str("subtype") == "init" {
			c.onInit(f)
		}
	case "assistant":
		c.onAssistant(f)
	case "result":
		c.onResult(f)
	case "control_request":
		c.onRequest(f)
	case "control_response":
		c.onResponse(f.obj("response"))
	case "control_cancel_request":
		delete(c.asks, f.str("request_id"))
	}
	return ""
}

// onInit notes the session; while no turn runs it starts one: a note
// that came as the last turn ended runs as a turn of its own.
func (c *streamJSON) onInit(f sjFields) {
	if id := f.str("session_id"); id != "" {
		c.session = sjLine(id, 200)
	}
	if !c.busy && c.started && !c.over {
		c.beginLocked("a note sent as the last turn ended")
	}
}

func (c *streamJSON) onAssistant(f sjFields) {
	if !c.busy && c.started && !c.over {
		c.beginLocked("the agent went on by itself")
	}
	turn := strconv.Itoa(c.turn)
	for _, b := range f.obj("message").list("content") {
		switch b.str("type") {
		case "text":
			if t := sjMessage(b.str("text")); t != "" {
				c.box.add(Event{Kind: Message, Turn: turn, Text: t})
			}
		case "tool_use":
			in := b.obj("input")
			c.box.add(Event{Kind: Tool, Turn: turn, Text: sjToolTitle(b.str("name"), in), Files: sjToolFiles(in)})
		}
	}
}

func (c *streamJSON) onResult(f sjFields) {
	u := f.obj("usage")
	t := &Tokens{Input: u.int("input_tokens"), Output: u.int("output_tokens"),
		CacheRead: u.int("cache_read_input_tokens"), CacheWrite: u.int("cache_creation_input_tokens")}
	// total_cost_usd is the session's: the turn's is what it grew by.
	if total := f.num("total_cost_usd"); total > c.cost {
		t.USD, c.cost = total-c.cost, total
	}
	text := f.str("result")
	if errs := f.list("errors"); text == "" && len(errs) > 0 {
		_ = json.Unmarshal(errs[0].raw, &text)
	}
	// A Usage event too, for a driver that logs what the agent reports;
	// both carry the turn's figures, not the session's.
	turn := strconv.Itoa(c.turn)
	c.box.add(Event{Kind: Usage, Turn: turn, Tokens: t})
	c.box.add(Event{Kind: TurnEnded, Turn: turn, Stop: sjResultStop(f, c.interrupted), Text: sjLine(text, 500), Tokens: t})
	c.busy, c.interrupted = false, false
	clear(c.asks)
}

// sjResultStop is how the turn a result ends stopped.
func sjResultStop(f sjFields, interrupted bool) string {
	sub := f.str("subtype")
	switch {
	case sub == "success" && !f.bool("is_error"):
		switch f.str("stop_reason") {
		case "refusal":
			return StopRefused
		case "max_tokens":
			return StopLimit
		}
		return StopDone
	case interrupted || strings.HasPrefix(f.str("terminal_reason"), "aborted"):
		return StopCancelled
	case strings.HasPrefix(sub, "error_max_"):
		return StopLimit
	}
	return StopError
}

// onRequest answers what the CLI asks: a tool's permission, allowed here
// unless the endpoint asks (then it waits for Answer); nothing else.
func (c *streamJSON) onRequest(f sjFields) {
	id, req := f.str("request_id"), f.obj("request")
	if id == "" {
		c.logf("claude stream-json: a control request with no request_id")
		return
	}
	if sub := req.str("subtype"); sub != "can_use_tool" {
		c.respond(id, nil, "fleetwatch does not answer "+sjLine(sub, 40)+" requests")
		return
	}
	input := req["input"]
	if len(input) == 0 || input[0] != '{' {
		input = json.RawMessage("{}")
	}
	title := sjToolTitle(req.str("tool_name"), req.obj("input"))
	switch {
	case !c.cfg.Asks:
		c.respond(id, map[string]any{"behavior": "allow", "updatedInput": input}, "")
	case len(c.asks) >= streamJSONAsks:
		c.respond(id, map[string]any{"behavior": "deny", "message": "Too many requests are waiting for an answer."}, "")
	default:
		c.asks[id] = input
		c.box.add(Event{Kind: Asked, Turn: strconv.Itoa(c.turn), Text: title, Ask: &Ask{ID: id, Question: title,
			Options: []Option{{ID: "allow", Label: "Allow", Allow: true}, {ID: "deny", Label: "Deny"}}}})
	}
}

// respond answers the CLI's request id: with answer, or an error.
func (c *streamJSON) respond(id string, answer map[string]any, refusal string) {
	resp := map[string]any{"subtype": "success", "request_id": id, "response": answer}
	if refusal != "" {
		resp = map[string]any{"subtype": "error", "request_id": id, "error": refusal}
	}
	if err := c.write(map[string]any{"type": "control_response", "response": resp}); err != nil {
		c.breakLocked(err.Error())
	}
}

// onResponse hands the answer to one of our control requests to its
// waiter.
func (c *streamJSON) onResponse(r sjFields) {
	id := r.str("request_id")
	answered, ok := c.waiting[id]
	if !ok {
		return
	}
	delete(c.waiting, id)
	if r.str("subtype") == "error" {
		answered <- errors.New("the agent refused it: " + sjLine(r.str("error"), 200))
		return
	}
	answered <- nil
}

// sjToolTitle is a tool call in one line: its name and what it acts on.
func sjToolTitle(name string, in sjFields) string {
	name = sjLine(name, 60)
	for _, k := range []string{"command", "file_path", "notebook_path", "pattern", "url", "query", "description", "prompt"} {
		if v := in.str(k); v != "" {
			return sjLine(name+": "+v, 300)
		}
	}
	return name
}

// sjToolFiles are the files a tool call names.
func sjToolFiles(in sjFields) []string {
	var files []string
	for _, k := range []string{"file_path", "notebook_path"} {
		if v := in.str(k); v != "" && len(v) <= 4096 {
			files = append(files, v)
		}
	}
	return files
}

// sjMessage is an assistant text as a Message: its lines kept, at
// most 64 KiB, ending with a newline so that a driver joining chunks
// keeps two messages apart.
func sjMessage(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	if len(s) > 64<<10 {
		s = sjClip(s, 64<<10)
	}
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

// sjLine is s on one line, at most max bytes (cut at a rune).
func sjLine(s string, max int) string {
	return sjClip(strings.Join(strings.Fields(s), " "), max)
}

// sjClip is s cut to at most max bytes, at a rune, marked where cut.
func sjClip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// sjFields is a JSON object read leniently: a field that is missing or of
// another type reads as its zero value, never as an error.
type sjFields map[string]json.RawMessage

func (f sjFields) str(k string) string {
	var s string
	_ = json.Unmarshal(f[k], &s)
	return s
}

func (f sjFields) num(k string) float64 {
	var n float64
	_ = json.Unmarshal(f[k], &n)
	return n
}

func (f sjFields) int(k string) int64 {
	n := f.num(k)
	if n < 0 || n > 1e15 {
		return 0
	}
	return int64(n)
}

func (f sjFields) bool(k string) bool {
	var b bool
	_ = json.Unmarshal(f[k], &b)
	return b
}

func (f sjFields) obj(k string) sjFields {
	var o sjFields
	_ = json.Unmarshal(f[k], &o)
	return o
}

// sjItem is one element of a JSON list: an object's fields, and its text.
type sjItem struct {
	sjFields
	raw []byte
}

func (f sjFields) list(k string) []sjItem {
	var l []json.RawMessage
	_ = json.Unmarshal(f[k], &l)
	items := make([]sjItem, len(l))
	for i, raw := range l {
		_ = json.Unmarshal(raw, &items[i].sjFields)
		items[i].raw = raw
	}
	return items
}
