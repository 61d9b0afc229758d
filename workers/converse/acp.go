package converse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// acpHandshake bounds Start's requests; a variable so that a test of an
// agent that never answers need not wait the whole HandshakeTimeout.
var acpHandshake = HandshakeTimeout

// acpCancelGrace is how long an interrupted turn may take to end before
// its prompt request is given up on (the agent ignored session/cancel):
// the turn then ends cancelled all the same.
var acpCancelGrace = 30 * time.Second

// acpEvents is the Events channel's room. A driver that reads slowly
// makes the conversation wait, and then stop reading the agent's stdout
// (pump), so the agent waits on its writes rather than the conversation
// dropping events or failing.
const acpEvents = 256

// acpConv is a conversation over the Agent Client Protocol: fleetwatch is
// the client, the agent runs the session in the worktree and edits files
// itself (no fs or terminal capabilities are offered: the sandbox holds
// it, not the client).
type acpConv struct {
	cfg      Config
	conn     *acp.ClientSideConnection
	in       io.WriteCloser
	session  string
	events   chan Event
	ctx      context.Context // ended by Close: in-flight requests give up
	stop     context.CancelFunc
	quit     chan struct{} // closed by Close: emits drop, waits end
	eof      string        // the sentinel method the pump sends after the agent's last line
	drained  chan struct{} // closed when the sentinel is handled: every update before it was
	mark     string        // the method of the pump's marks
	lines    int64         // lines the pump forwarded (the pump's own)
	marks    atomic.Int64  // the last mark handled
	progress chan struct{} // a mark was handled

	mu      sync.Mutex
	closed  bool
	ended   bool // the agent's stdout ended
	failure string
	turn    *acpTurn
	turns   int
	asks    map[string]*acpAsk
	askSeq  int
	msg     strings.Builder // the agent message being streamed, coalesced
	msgID   string
	tools   map[acp.ToolCallId]string // titles of the turn's tool calls, for updates that omit it
	running sync.WaitGroup            // turns and permission requests in flight

	emitMu   sync.RWMutex
	evClosed bool
}

// acpTurn is a running prompt.
type acpTurn struct {
	id          string
	cancel      context.CancelFunc
	interrupted bool
	grace       *time.Timer
}

func startACP(pipes Pipes, cfg Config) (Conversation, error) {
	c := newACP(pipes, cfg)
	ctx, cancel := context.WithTimeout(c.ctx, acpHandshake)
	defer cancel()
	if err := c.handshake(ctx); err != nil {
		if why := c.why(); why != "" {
			err = errors.New(why)
		} else if ctx.Err() != nil {
			err = fmt.Errorf("the agent did not answer within %s", acpHandshake)
		}
		_ = c.Close()
		return nil, fmt.Errorf("acp: %v", oneLine(err.Error(), 300))
	}
	return c, nil
}

func newACP(pipes Pipes, cfg Config) *acpConv {
	c := &acpConv{cfg: cfg, in: pipes.In, events: make(chan Event, acpEvents), quit: make(chan struct{}),
		eof: "_fleetwatch/eof/" + nonce(), drained: make(chan struct{}), progress: make(chan struct{}, 1), asks: map[string]*acpAsk{}, tools: map[acp.ToolCallId]string{}}
	c.mark = "_fleetwatch/mark/" + nonce()
	c.ctx, c.stop = context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	c.conn = acp.NewClientSideConnection(acpClient{c}, pipes.In, pr)
	// The SDK logs what it drops (a malformed message, a failed
	// notification) at Error; they reach Logf, its chatter does not.
	c.conn.SetLogger(slog.New(slog.NewTextHandler(logfWriter{cfg.Logf}, &slog.HandlerOptions{Level: slog.LevelWarn})))
	go c.pump(pipes.Out, pw)
	go c.finish(pr)
	return c
}

// handshake is initialize, session/new and the model.
func (c *acpConv) handshake(ctx context.Context) error {
	init, err := c.conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber,
		ClientInfo: &acp.Implementation{Name: "fleetwatch", Version: "1"}})
	if err != nil {
		return fmt.Errorf("initialize: %v", err)
	}
	if init.ProtocolVersion != acp.ProtocolVersionNumber {
		return fmt.Errorf("the agent speaks ACP version %d, fleetwatch %d", init.ProtocolVersion, acp.ProtocolVersionNumber)
	}
	s, err := c.conn.NewSession(ctx, acp.NewSessionRequest{Cwd: c.cfg.Dir, McpServers: []acp.McpServer{}})
	if err != nil {
		return fmt.Errorf("session/new: %v", err)
	}
	if s.SessionId == "" {
		return errors.New("session/new gave no sessionId")
	}
	c.mu.Lock()
	c.session = string(s.SessionId)
	c.mu.Unlock()
	return c.setModel(ctx, s)
}

// setModel picks cfg.Model through the session's model option, where the
// agent offers one (opencode's configOptions hold a "model" select);
// otherwise the preset's argv or env carry the model.
func (c *acpConv) setModel(ctx context.Context, s acp.NewSessionResponse) error {
	if c.cfg.Model == "" {
		return nil
	}
	for _, o := range s.ConfigOptions {
		sel := o.Select
		if sel == nil || (sel.Id != "model" && (sel.Category == nil || *sel.Category != "model")) {
			continue
		}
		if string(sel.CurrentValue) == c.cfg.Model {
			return nil
		}
		_, err := c.conn.SetSessionConfigOption(ctx, acp.SetSessionConfigOptionRequest{ValueId: &acp.SetSessionConfigOptionValueId{
			SessionId: s.SessionId, ConfigId: sel.Id, Value: acp.SessionConfigValueId(c.cfg.Model)}})
		if err != nil {
			return fmt.Errorf("the agent refused model %s: %v", c.cfg.Model, err)
		}
		return nil
	}
	c.logf("acp: the agent offers no model option; its argv or env name the model")
	return nil
}

func (c *acpConv) Prompt(text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.ended {
		return ErrClosed
	}
	if c.turn != nil {
		return ErrBusy
	}
	c.turns++
	ctx, cancel := context.WithCancel(c.ctx)
	t := &acpTurn{id: fmt.Sprint(c.turns), cancel: cancel}
	c.turn = t
	clear(c.tools)
	c.running.Add(1)
	go c.runTurn(ctx, t, text)
	return nil
}

// runTurn sends session/prompt and waits for its answer, which the agent
// gives when the turn ends; the SDK hands over every update sent before
// the answer first, so TurnEnded follows the turn's last event.
func (c *acpConv) runTurn(ctx context.Context, t *acpTurn, text string) {
	defer c.running.Done()
	defer t.cancel()
	c.emit(Event{Kind: TurnStarted, Turn: t.id})
	resp, err := c.conn.Prompt(ctx, acp.PromptRequest{SessionId: acp.SessionId(c.session), Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	if err != nil {
		c.drain() // the updates read before the output ended belong to the turn
	}
	end := Event{Kind: TurnEnded, Turn: t.id}
	c.mu.Lock()
	msg := c.flushLocked()
	interrupted := t.interrupted
	if t.grace != nil {
		t.grace.Stop()
	}
	c.turn = nil
	c.mu.Unlock()
	switch {
	case err == nil:
		end.Stop, end.Text = acpStop(resp.StopReason)
		end.Tokens = acpTokens(resp.Usage)
	case interrupted && ctx.Err() != nil && c.ctx.Err() == nil:
		end.Stop, end.Text = StopCancelled, fmt.Sprintf("the agent did not end its turn within %s of the cancel", acpCancelGrace)
	default:
		end.Stop, end.Text = StopError, "session/prompt: "+requestError(err)
	}
	if msg != nil {
		c.emit(*msg)
	}
	c.emit(end)
}

// acpStop is TurnEnded's Stop for an ACP stopReason, and a text for one
// this side does not know.
func acpStop(r acp.StopReason) (string, string) {
	switch r {
	case acp.StopReasonEndTurn:
		return StopDone, ""
	case acp.StopReasonCancelled:
		return StopCancelled, ""
	case acp.StopReasonRefusal:
		return StopRefused, ""
	case acp.StopReasonMaxTokens, acp.StopReasonMaxTurnRequests:
		return StopLimit, string(r)
	}
	return StopError, "the agent ended its turn with stopReason " + oneLine(fmt.Sprintf("%q", string(r)), 100)
}

// acpTokens are the figures a prompt's answer carries (opencode: its
// last model call's), nil when none.
func acpTokens(u *acp.Usage) *Tokens {
	if u == nil {
		return nil
	}
	t := &Tokens{Input: int64(u.InputTokens), Output: int64(u.OutputTokens)}
	if u.CachedReadTokens != nil {
		t.CacheRead = int64(*u.CachedReadTokens)
	}
	if u.CachedWriteTokens != nil {
		t.CacheWrite = int64(*u.CachedWriteTokens)
	}
	return t
}

// Steer: ACP has no steer; the driver keeps the note for the next turn.
func (c *acpConv) Steer(string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.ended {
		return false, ErrClosed
	}
	return false, nil
}

// Interrupt sends session/cancel and answers the turn's waiting
// permission requests "cancelled", as the protocol asks; the agent then
// ends the turn with stopReason cancelled.
func (c *acpConv) Interrupt() error {
	c.mu.Lock()
	if c.closed || c.ended {
		c.mu.Unlock()
		return ErrClosed
	}
	t := c.turn
	if t == nil {
		c.mu.Unlock()
		return ErrIdle
	}
	t.interrupted = true
	if t.grace == nil {
		t.grace = time.AfterFunc(acpCancelGrace, t.cancel)
	}
	for id, a := range c.asks {
		delete(c.asks, id)
		a.answer <- acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}}
	}
	c.mu.Unlock()
	return c.notify(func(ctx context.Context) error {
		return c.conn.Cancel(ctx, acp.CancelNotification{SessionId: acp.SessionId(c.session)})
	})
}

// acpWrite bounds a write to the agent's stdin: an agent that reads
// nothing fills the pipe, and a caller must not wait on it forever.
const acpWrite = 10 * time.Second

// notify runs send, waiting at most acpWrite for the agent to take it.
func (c *acpConv) notify(send func(context.Context) error) error {
	done := make(chan error, 1)
	go func() { done <- send(c.ctx) }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("acp: %s", requestError(err))
		}
		return nil
	case <-time.After(acpWrite):
		return fmt.Errorf("acp: the agent has not read its input for %s", acpWrite)
	}
}

func (c *acpConv) Events() <-chan Event { return c.events }

func (c *acpConv) Session() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// Close closes the agent's stdin and gives up every request in flight;
// it waits on nothing the agent does. Events closes when its stdout ends.
func (c *acpConv) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	close(c.quit)
	c.stop()
	if err := c.in.Close(); err != nil && !errors.Is(err, io.ErrClosedPipe) && !strings.Contains(err.Error(), "already closed") {
		return fmt.Errorf("acp: closing the agent's stdin: %v", err)
	}
	return nil
}

// emit hands e to the driver: it waits while the channel is full, until
// Close; after the channel is closed it drops e.
func (c *acpConv) emit(e Event) {
	e.At = time.Now()
	c.emitMu.RLock()
	defer c.emitMu.RUnlock()
	if c.evClosed {
		return
	}
	select {
	case c.events <- e:
	case <-c.quit:
	}
}

func (c *acpConv) logf(format string, args ...any) {
	if c.cfg.Logf != nil {
		c.cfg.Logf(format, args...)
	}
}

// requestError is err in one line: a JSON-RPC error's message and data.
func requestError(err error) string {
	var re *acp.RequestError
	if errors.As(err, &re) {
		s := re.Message
		if re.Data != nil {
			s += ": " + fmt.Sprint(re.Data)
		}
		return oneLine(s, 300)
	}
	return oneLine(err.Error(), 300)
}
