package converse

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
)

// Codex's app-server (`codex app-server`, proven with 0.169.0; the names
// below are its generated schema's, `codex app-server
// generate-json-schema`): initialize and the initialized notification,
// thread/start for the session, then one turn/start per turn; turn/steer
// adds a note to the running turn (Codex hands it to the model at its
// next call, after the tool running now), turn/interrupt ends it. The
// agent's approval requests are JSON-RPC requests to this client.

// asEventBuffer is how many events wait for the driver. When it is full
// the reader waits with them: the agent's stdout then fills and the agent
// waits too, which is fine while the driver reads; Close ends the wait.
const asEventBuffer = 256

// appServer is one conversation with `codex app-server`.
type appServer struct {
	rpc    *asRPC
	cfg    Config
	events chan Event
	quit   chan struct{} // closed by Close: the reader stops handing events
	read   chan struct{} // closed when the reader has ended
	once   sync.Once

	mu       sync.Mutex
	thread   string
	turn     string // the turn running now, "" when none
	starting bool   // a turn/start is on its way
	ended    string // the last turn that ended: a late turn/start answer does not revive it
	closed   bool
	asks     map[string]*asPending // waiting for the driver's Answer, by Ask.ID
	nextAsk  int
	files    map[string][]string // file changes' paths by item id, for their approvals
	tools    map[string]bool     // the turn's tool items seen starting
	usage    *Tokens             // the thread's figures so far
}

func startAppServer(pipes Pipes, cfg Config) (Conversation, error) {
	c := &appServer{
		rpc: newASRPC(pipes.In), cfg: cfg, events: make(chan Event, asEventBuffer),
		quit: make(chan struct{}), read: make(chan struct{}),
		asks: map[string]*asPending{}, files: map[string][]string{}, tools: map[string]bool{},
	}
	go c.reader(pipes.Out)
	if err := c.handshake(); err != nil {
		c.Close()
		return nil, fmt.Errorf("codex app-server: %w", err)
	}
	return c, nil
}

// handshake is initialize, initialized and thread/start, all within
// asHandshakeTimeout.
func (c *appServer) handshake() error {
	deadline := time.Now().Add(asHandshakeTimeout)
	info := map[string]any{"clientInfo": map[string]any{"name": "fleetwatch", "title": "fleetwatch", "version": "1"}}
	if _, err := c.rpc.call("initialize", info, asHandshakeTimeout); err != nil {
		return err
	}
	if err := c.rpc.notify("initialized"); err != nil {
		return err
	}
	// Full access as the one-shot preset runs it (registry/preset_codex.go
	// says why): fleetwatch's sandbox is the boundary. "untrusted" asks
	// before any command Codex does not know to be read-only.
	policy := "never"
	if c.cfg.Asks {
		policy = "untrusted"
	}
	params := map[string]any{"cwd": c.cfg.Dir, "approvalPolicy": policy, "sandbox": "danger-full-access"}
	if c.cfg.Model != "" {
		params["model"] = c.cfg.Model
	}
	res, err := c.rpc.call("thread/start", params, max(time.Until(deadline), time.Millisecond))
	if err != nil {
		return err
	}
	var r struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if json.Unmarshal(res, &r) != nil || r.Thread.ID == "" {
		return errors.New("thread/start: the answer names no thread")
	}
	c.mu.Lock()
	c.thread = r.Thread.ID
	c.mu.Unlock()
	return nil
}

// asText is a text input, the one kind of UserInput fleetwatch sends.
func asText(text string) []any {
	return []any{map[string]any{"type": "text", "text": text, "text_elements": []any{}}}
}

// goneLocked is why the conversation is over (closed, or the agent broke
// it), nil while it goes on; c.mu is held.
func (c *appServer) goneLocked() error {
	if c.closed {
		return ErrClosed
	}
	return c.rpc.err()
}

func (c *appServer) Prompt(text string) error {
	c.mu.Lock()
	if err := c.goneLocked(); err != nil {
		c.mu.Unlock()
		return err
	}
	if c.turn != "" || c.starting {
		c.mu.Unlock()
		return ErrBusy
	}
	c.starting = true
	thread := c.thread
	c.mu.Unlock()
	res, err := c.rpc.call("turn/start", map[string]any{"threadId": thread, "input": asText(text)}, asRequestTimeout)
	var r struct {
		Turn struct {
			ID string `json:"id"`
		} `json:"turn"`
	}
	if err == nil && (json.Unmarshal(res, &r) != nil || r.Turn.ID == "") {
		err = errors.New("turn/start: the answer names no turn")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.starting = false
	if err == nil && c.turn == "" && r.Turn.ID != c.ended {
		c.turn = r.Turn.ID
	}
	return err
}

func (c *appServer) Steer(text string) (bool, error) {
	c.mu.Lock()
	thread, turn, gone := c.thread, c.turn, c.goneLocked()
	c.mu.Unlock()
	if gone != nil {
		return false, gone
	}
	if turn == "" {
		return false, nil
	}
	_, err := c.rpc.call("turn/steer", map[string]any{"threadId": thread, "input": asText(text), "expectedTurnId": turn}, asRequestTimeout)
	var refused *asRPCError
	if errors.As(err, &refused) {
		// The turn ended between the look and the steer (its id no longer
		// matches): the note waits for the next turn.
		c.logf("app-server: turn/steer refused: %v", err)
		return false, nil
	}
	return err == nil, err
}

func (c *appServer) Interrupt() error {
	c.mu.Lock()
	thread, turn, gone := c.thread, c.turn, c.goneLocked()
	var waiting []*asPending
	if turn != "" {
		for id, p := range c.asks {
			if p.turn == turn || p.turn == "" {
				waiting = append(waiting, p)
				delete(c.asks, id) // no Answer races the interrupt
			}
		}
	}
	c.mu.Unlock()
	if gone != nil {
		return gone
	}
	if turn == "" {
		return ErrIdle
	}
	// Codex resolves what waits for an answer when it aborts the turn
	// (serverRequest/resolved): declining first would let the turn go on
	// to the model before the interrupt arrives. Declined here only if
	// the interrupt did not go through, so that nothing waits forever.
	_, err := c.rpc.call("turn/interrupt", map[string]any{"threadId": thread, "turnId": turn}, asRequestTimeout)
	if err == nil {
		return nil
	}
	c.mu.Lock()
	ended := c.turn != turn
	c.mu.Unlock()
	var refused *asRPCError
	if ended && errors.As(err, &refused) {
		return ErrIdle // the turn ended before the interrupt reached it
	}
	for _, p := range waiting {
		if res, derr := p.answer(Reply{Deny: true}); derr == nil {
			_ = c.rpc.reply(p.id, res)
		}
	}
	return err
}

func (c *appServer) Answer(id string, reply Reply) error {
	c.mu.Lock()
	p, ok := c.asks[id]
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if !ok {
		return ErrNoAsk
	}
	res, err := p.answer(reply)
	if err != nil {
		return err
	}
	c.mu.Lock()
	_, still := c.asks[id]
	delete(c.asks, id)
	c.mu.Unlock()
	if !still {
		return ErrNoAsk // answered, or withdrawn, meanwhile
	}
	return c.rpc.reply(p.id, res)
}

func (c *appServer) Events() <-chan Event { return c.events }

func (c *appServer) Session() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.thread
}

// asCloseGrace is how long Close waits for the agent's output to end
// after closing its stdin.
var asCloseGrace = 5 * time.Second

// Close closes the agent's stdin (app-server exits when it ends) and
// waits a little for its output to end; it returns even if the agent
// ignores it (the driver's process handling ends it then).
func (c *appServer) Close() error {
	c.once.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		// Not under wmu: a write stuck on a full pipe would hold it, and
		// closing the pipe is what unblocks that write.
		closed := make(chan struct{})
		go func() {
			_ = c.rpc.in.Close()
			close(closed)
		}()
		deadline := time.Now().Add(asCloseGrace)
		select {
		case <-closed:
		case <-time.After(asCloseGrace):
		}
		c.rpc.end(ErrClosed)
		close(c.quit) // the reader drops what it still reads
		select {
		case <-c.read:
		case <-time.After(time.Until(deadline)):
		}
	})
	return nil
}

func (c *appServer) logf(format string, args ...any) {
	if c.cfg.Logf != nil {
		c.cfg.Logf(format, args...)
	}
}

// emit hands ev to the driver, waiting while the buffer is full, unless
// the conversation is closed.
func (c *appServer) emit(ev Event) {
	ev.At = time.Now()
	select {
	case c.events <- ev:
	case <-c.quit:
	}
}

// reader reads the agent's lines until its output ends or breaks; then
// the events close, after a Failed event saying why unless Close ended it.
func (c *appServer) reader(out io.Reader) {
	defer close(c.read)
	defer close(c.events)
	br := bufio.NewReaderSize(out, 64<<10)
	for n := 1; ; n++ {
		line, err := asReadLine(br)
		if err != nil {
			c.stop(err, n)
			return
		}
		if len(line) == 0 {
			continue
		}
		var m asMsg
		if err := json.Unmarshal(line, &m); err != nil {
			c.stop(fmt.Errorf("line %d is not JSON-RPC: %q", n, asClip(string(line), 120)), n)
			return
		}
		c.dispatch(m)
	}
}

// stop ends the conversation for what the reader met at line n.
func (c *appServer) stop(err error, n int) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if errors.Is(err, io.EOF) {
		err = errors.New("the agent's output ended (line " + strconv.Itoa(n) + ")")
	}
	c.rpc.end(err)
	if !closed {
		c.emit(Event{Kind: Failed, Text: "codex app-server: " + err.Error()})
	}
}

// dispatch routes one message: an answer to a request of ours, a request
// of the agent's, or a notification.
func (c *appServer) dispatch(m asMsg) {
	switch {
	case len(m.ID) > 0 && m.Method == "":
		if !c.rpc.answered(m) {
			c.logf("app-server: an answer to no request of ours (id %s)", asClip(string(m.ID), 40))
		}
	case len(m.ID) > 0:
		c.request(m)
	case m.Method != "":
		c.notification(m)
	default:
		c.logf("app-server: a message with neither id nor method")
	}
}
