package converse

// Claude Code's stream-json conversation: `claude -p --input-format
// stream-json --output-format stream-json --verbose`, one JSON object a
// line each way. What 2.1.328 does, as the tests against the scripted API
// saw it:
//   - in: user messages; our control requests (initialize, interrupt),
//     each answered by a control_response with its request_id; our
//     control_responses to the CLI's can_use_tool requests.
//   - out: system/init (the session id) as each turn starts; assistant
//     messages (text, tool_use); user messages (tool results); one result
//     a turn (its usage the turn's, total_cost_usd the session's so far);
//     control_request can_use_tool (with --permission-prompt-tool stdio),
//     control_cancel_request, control_response.
//   - a user message written while a turn runs is taken into that turn at
//     its next model call (between tool calls); one that comes as the turn
//     ends runs after the result as a turn of its own, which starts with
//     system/init: that is read as a turn the agent started.
//   - the interrupt is acknowledged at once and the turn's result follows
//     (error_during_execution, terminal_reason aborted_*).
//
// The model and the folder are the argv's and the process's (Config.Model
// and Dir are not sent): nothing in the protocol names them.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"
)

// Bounds on what the agent may make the conversation wait for or hold.
const (
	streamJSONMaxLine = 4 << 20          // one line of the agent's output
	streamJSONRequest = 10 * time.Second // the agent's answer to an interrupt
	streamJSONClose   = 5 * time.Second  // closing the agent's stdin
	streamJSONJunk    = 100              // lines in a row that are not JSON
	streamJSONAsks    = 64               // permission requests waiting at once
)

// Bounds tests shorten: the initialize request of Start, one line
// written to the agent.
var (
	streamJSONHandshake = HandshakeTimeout
	streamJSONWrite     = 10 * time.Second
)

// streamJSON is one Claude Code conversation.
type streamJSON struct {
	cfg  Config
	in   io.WriteCloser
	box  *sjOutbox
	done chan struct{} // closed when the agent's stdout has ended or broke

	wmu        sync.Mutex    // one line written at a time
	broken     bool          // a write failed or timed out: no more are tried
	writeLimit time.Duration // streamJSONWrite when it started

	mu          sync.Mutex
	started     bool // the initialize request was answered
	busy        bool // a turn runs
	interrupted bool // the running turn was interrupted
	over        bool // closed, or the agent's stdout ended
	turn        int
	session     string
	cost        float64                    // the session's total_cost_usd so far
	asks        map[string]json.RawMessage // can_use_tool requests waiting: id → the tool's input
	waiting     map[string]chan error      // our control requests: id → where the answer goes
	nextID      int
	junk        int    // non-JSON lines in a row
	why         string // why the agent's stdout ended, once done is closed
}

func startStreamJSON(pipes Pipes, cfg Config) (Conversation, error) {
	if pipes.In == nil || pipes.Out == nil {
		return nil, errors.New("stream-json needs the agent's stdin and stdout")
	}
	c := &streamJSON{cfg: cfg, in: pipes.In, box: newSJOutbox(), done: make(chan struct{}), writeLimit: streamJSONWrite,
		asks: map[string]json.RawMessage{}, waiting: map[string]chan error{}}
	go c.read(pipes.Out)
	// Not needed for a turn, but it proves the agent speaks stream-json
	// before the plan is sent to it.
	if err := c.control(map[string]any{"subtype": "initialize"}, streamJSONHandshake); err != nil {
		c.Close()
		return nil, fmt.Errorf("claude stream-json: the initialize request: %v", err)
	}
	c.mu.Lock()
	c.started = true
	c.mu.Unlock()
	return c, nil
}

// sjUserLine is a user message as stream-json input takes it.
func sjUserLine(text string) map[string]any {
	return map[string]any{"type": "user", "message": map[string]any{"role": "user",
		"content": []any{map[string]any{"type": "text", "text": text}}}}
}

func (c *streamJSON) Prompt(text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.over {
		return ErrClosed
	}
	if c.busy {
		return ErrBusy
	}
	c.beginLocked("")
	// TurnStarted is queued before the message is written, so it comes
	// before anything the turn does.
	if err := c.write(sjUserLine(text)); err != nil {
		c.breakLocked(err.Error())
		return err
	}
	return nil
}

// beginLocked starts a turn: the driver's, or one the agent began itself
// (why says so).
func (c *streamJSON) beginLocked(why string) {
	c.busy, c.interrupted = true, false
	c.turn++
	c.box.add(Event{Kind: TurnStarted, Turn: strconv.Itoa(c.turn), Text: why})
}

func (c *streamJSON) Steer(text string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.over {
		return false, ErrClosed
	}
	if !c.busy {
		return false, nil
	}
	if err := c.write(sjUserLine(text)); err != nil {
		c.breakLocked(err.Error())
		return false, err
	}
	return true, nil
}

func (c *streamJSON) Interrupt() error {
	c.mu.Lock()
	if c.over {
		c.mu.Unlock()
		return ErrClosed
	}
	if !c.busy {
		c.mu.Unlock()
		return ErrIdle
	}
	c.interrupted = true
	c.mu.Unlock()
	if err := c.control(map[string]any{"subtype": "interrupt"}, streamJSONRequest); err != nil {
		return fmt.Errorf("claude stream-json: the interrupt: %v", err)
	}
	return nil
}

func (c *streamJSON) Answer(id string, reply Reply) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	input, ok := c.asks[id]
	if !ok || c.over {
		return ErrNoAsk
	}
	var answer map[string]any
	switch {
	case reply.Option == "allow" && !reply.Deny:
		// The input unchanged: what the person saw is what runs.
		answer = map[string]any{"behavior": "allow", "updatedInput": input}
	case reply.Option == "deny" || (reply.Option == "" && reply.Deny):
		msg := sjLine(reply.Text, 500)
		if msg == "" {
			msg = "The operator refused this tool call."
		}
		answer = map[string]any{"behavior": "deny", "message": msg}
	case reply.Option == "":
		return errors.New("this request takes an option (allow or deny), not a text")
	default:
		return fmt.Errorf("%q is not an option of this request (allow, deny)", reply.Option)
	}
	delete(c.asks, id)
	err := c.write(map[string]any{"type": "control_response", "response": map[string]any{
		"subtype": "success", "request_id": id, "response": answer}})
	if err != nil {
		c.breakLocked(err.Error())
	}
	return err
}

func (c *streamJSON) Events() <-chan Event { return c.box.out }

func (c *streamJSON) Session() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// Close closes the agent's stdin, after which Claude Code ends its turn
// and exits. Events go on until its stdout ends; a driver that reads
// them no more holds nothing up (the outbox gives up on it).
func (c *streamJSON) Close() error {
	c.mu.Lock()
	c.over = true
	c.mu.Unlock()
	c.box.stop()
	closed := make(chan error, 1)
	go func() { closed <- c.in.Close() }()
	select {
	case err := <-closed:
		if err != nil && !errors.Is(err, io.ErrClosedPipe) && !errors.Is(err, os.ErrClosed) {
			return err
		}
		return nil
	case <-time.After(streamJSONClose):
		return errors.New("the agent's stdin did not close in 5s")
	}
}

// control sends a control request and waits up to limit for its answer.
func (c *streamJSON) control(req map[string]any, limit time.Duration) error {
	c.mu.Lock()
	if c.over {
		c.mu.Unlock()
		return ErrClosed
	}
	c.nextID++
	id := "fleetwatch-" + strconv.Itoa(c.nextID)
	answered := make(chan error, 1)
	c.waiting[id] = answered
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
	}
	if err := c.write(map[string]any{"type": "control_request", "request_id": id, "request": req}); err != nil {
		forget()
		return err
	}
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case err := <-answered:
		return err
	case <-c.done:
		forget()
		return c.doneReason()
	case <-timer.C:
		forget()
		return fmt.Errorf("the agent did not answer in %s", limit)
	}
}

// write sends v as one line, waiting at most streamJSONWrite for an agent
// that does not read its input.
func (c *streamJSON) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.broken {
		return ErrClosed
	}
	wrote := make(chan error, 1)
	go func() {
		_, err := c.in.Write(b)
		wrote <- err
	}()
	timer := time.NewTimer(c.writeLimit)
	defer timer.Stop()
	select {
	case err = <-wrote:
	case <-timer.C:
		err = fmt.Errorf("the agent has not read its input for %s", c.writeLimit)
		go c.in.Close()
	}
	if err != nil {
		c.broken = true
		return fmt.Errorf("writing to the agent: %v", err)
	}
	return nil
}

// breakLocked ends a conversation whose protocol broke: a Failed event
// says why, and no method works after it.
func (c *streamJSON) breakLocked(why string) {
	if c.over {
		return
	}
	c.over, c.busy = true, false
	clear(c.asks)
	c.box.add(Event{Kind: Failed, Text: "claude stream-json: " + sjLine(why, 300)})
	c.logf("claude stream-json: %s", why)
}

func (c *streamJSON) logf(format string, args ...any) {
	if c.cfg.Logf != nil {
		c.cfg.Logf(format, args...)
	}
}
