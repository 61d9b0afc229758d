// Package converse holds a conversation with a running coding agent over
// the protocol its preset speaks — the Agent Client Protocol (ACP),
// Codex's app-server, Claude Code's stream-json — on the agent's stdin and
// stdout: the plan goes as the first turn, a person's notes steer the turn
// or wait for the next, an interrupt ends a turn without ending the run,
// and what the agent does and asks comes back as Events. It knows nothing
// of plans, leases or faces: the driver (package workers) holds the run.
package converse

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// Protocol names how an endpoint's agent is talked to.
type Protocol string

const (
	OneShot    Protocol = ""            // a headless one-shot run: no conversation
	ACP        Protocol = "acp"         // Agent Client Protocol, JSON-RPC 2.0 over stdio
	AppServer  Protocol = "app-server"  // Codex's app-server, JSON-RPC over stdio
	StreamJSON Protocol = "stream-json" // Claude Code's --input-format stream-json
)

// Protocols are the words an endpoint's `talk:` takes, one-shot first.
var Protocols = []Protocol{OneShot, ACP, AppServer, StreamJSON}

// Name is p as endpoints.yaml writes it.
func (p Protocol) Name() string {
	if p == OneShot {
		return "one-shot"
	}
	return string(p)
}

// Parse reads an endpoint's `talk:` word.
func Parse(word string) (Protocol, error) {
	for _, p := range Protocols {
		if word == p.Name() || (word == string(p) && p != OneShot) {
			return p, nil
		}
	}
	return OneShot, fmt.Errorf("%q is not a protocol (one-shot, acp, app-server, stream-json)", word)
}

// Config is what a conversation needs besides the agent's pipes.
type Config struct {
	Dir   string // the worktree: the session's working folder
	Model string // the model, where the protocol names it per session ("" leaves it to the agent's argv)
	// Asks makes the agent's permission requests reach the driver as Ask
	// events; without it the conversation allows what the agent asks
	// (the sandbox is the boundary, as in one-shot runs).
	Asks bool
	// Logf, when set, receives a line for what the conversation itself
	// notices (a malformed message, a refused request).
	Logf func(format string, args ...any)
}

// Conversation is one agent's conversation. Its methods may be called
// from any goroutine; Events is read by one.
type Conversation interface {
	// Prompt starts a turn with text; ErrBusy while a turn runs.
	Prompt(text string) error
	// Steer adds text to the turn running now where the protocol can
	// (steered true); false (and no error) when it has no steer or no
	// turn runs: the driver then keeps the note for the next turn.
	Steer(text string) (steered bool, err error)
	// Interrupt ends the turn running now; the conversation goes on and a
	// TurnEnded event (Stop "cancelled") follows. ErrIdle when no turn runs.
	Interrupt() error
	// Answer answers the Ask with id: an option's ID (a permission) or a
	// text (a question).
	Answer(id string, reply Reply) error
	// Events are what the agent does, in order; closed when the agent's
	// stdout ends.
	Events() <-chan Event
	// Session is the agent's own session or thread id, once known (for
	// resuming the plan's next run), "" before.
	Session() string
	// Close ends the conversation: it closes the agent's stdin, after
	// which the agent is expected to exit.
	Close() error
}

// Errors of a conversation's methods.
var (
	ErrBusy   = errors.New("a turn is running")
	ErrIdle   = errors.New("no turn is running")
	ErrClosed = errors.New("the conversation has ended")
	ErrNoAsk  = errors.New("no such request is waiting")
)

// EventKind says what an Event is.
type EventKind string

const (
	TurnStarted EventKind = "turn-started"
	TurnEnded   EventKind = "turn-ended" // Stop says how
	Tool        EventKind = "tool"       // a tool call began or changed: Text its title, Files what it touches
	Message     EventKind = "message"    // the agent's text (a whole message or a chunk)
	Usage       EventKind = "usage"      // Tokens are the turn's or the session's figures so far
	Asked       EventKind = "ask"        // the agent waits for Ask's answer
	Failed      EventKind = "failed"     // the protocol broke: Text says how; the driver ends the run
)

// How a turn ended (TurnEnded's Stop).
const (
	StopDone      = "end_turn"  // the agent finished its turn
	StopCancelled = "cancelled" // an interrupt ended it
	StopRefused   = "refusal"
	StopLimit     = "max_tokens" // it ran out of tokens or turns
	StopError     = "error"      // the turn failed: Text says how
)

// Event is one thing the agent did or said.
type Event struct {
	Kind  EventKind
	Turn  string // the protocol's turn id, where it has one
	Text  string // one line, unsanitized: the driver makes it terminal-safe
	Files []string
	Stop  string // TurnEnded
	// Tokens are usage figures (Usage; a TurnEnded may carry them too).
	Tokens *Tokens
	Ask    *Ask // Asked
	At     time.Time
}

// Tokens are usage figures as the agent reports them.
type Tokens struct {
	Input, Output, CacheRead, CacheWrite int64
	USD                                  float64 // 0 when the agent reports no cost
}

// Ask is a permission request or a question from the agent.
type Ask struct {
	ID       string // unique within the conversation
	Question string // what it asks, one line
	// Options are the answers a permission request takes; none for a
	// free-text question.
	Options []Option
}

// Option is one answer of a permission request.
type Option struct {
	ID    string
	Label string
	// Allow says whether choosing it lets the agent go ahead (ACP's
	// allow_once/allow_always) rather than refusing (reject_*).
	Allow bool
}

// Reply answers an Ask: Option (an Option's ID) for a permission, Text
// for a question; Deny with neither refuses a permission.
type Reply struct {
	Option string
	Text   string
	Deny   bool
}

// Pipes are the agent's stdin and stdout as the driver started it.
type Pipes struct {
	In  io.WriteCloser
	Out io.Reader
}

// Start begins a conversation in protocol p over pipes: its handshake
// (ACP's initialize and session/new, app-server's initialize and
// thread/start; nothing for stream-json), bounded by a timeout. The first
// turn is the driver's Prompt.
func Start(p Protocol, pipes Pipes, cfg Config) (Conversation, error) {
	switch p {
	case ACP:
		return startACP(pipes, cfg)
	case AppServer:
		return startAppServer(pipes, cfg)
	case StreamJSON:
		return startStreamJSON(pipes, cfg)
	}
	return nil, fmt.Errorf("%s is not a conversation", p.Name())
}

// HandshakeTimeout bounds Start: an agent that never answers its first
// request is refused, not waited on.
const HandshakeTimeout = 60 * time.Second
