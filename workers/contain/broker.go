package contain

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// The verbs an agent legitimately runs on its own plan (`fleetwatch
// complete`, `work-once --park`, `--heartbeat`, `--release`) reach the
// driver that started it over a Unix socket named by $FLEET_SOCKET; the
// driver checks them — the agent's own plan, its lease's token, these verbs
// only — and performs them itself. A contained agent could not write the
// plan tree anyway; an uncontained one gains nothing it did not have.

// SocketEnv names the driver's socket in an agent's environment.
const SocketEnv = "FLEET_SOCKET"

// The verbs an agent may ask of its driver.
const (
	AskComplete  = "complete"
	AskPark      = "park"
	AskRelease   = "release"
	AskHeartbeat = "heartbeat"
	// AskQuestion asks the operator a question (`fleetwatch ask`): the
	// reply, which may take until the run's wait_for_answer, is the answer.
	AskQuestion = "ask"
)

// AgentRequest is one verb an agent asks its driver to perform.
type AgentRequest struct {
	Verb   string `json:"verb"`
	Plan   string `json:"plan"` // as the agent named it: a rel, a path or a slug
	Token  string `json:"token"`
	To     string `json:"to,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Question is AskQuestion's question.
	Question string `json:"question,omitempty"`
}

// AgentReply is the driver's answer: where the plan is now, or why not.
type AgentReply struct {
	Plan  string `json:"plan,omitempty"`
	Error string `json:"error,omitempty"`
	// Answer is the operator's answer to an AskQuestion.
	Answer string `json:"answer,omitempty"`
}

// maxRequest bounds what the driver reads from an agent.
const maxRequest = 64 << 10

// askTimeout bounds a whole exchange: the driver answers between two
// steps of its loop, well within it. A question waits for a person, at
// most the longest wait_for_answer a project may set (a day), after which
// the driver parks the plan and ends the run.
const (
	askTimeout      = 2 * time.Minute
	questionTimeout = 24*time.Hour + askTimeout
)

// timeoutOf bounds the exchange of a request of verb.
func timeoutOf(verb string) time.Duration {
	if verb == AskQuestion {
		return questionTimeout
	}
	return askTimeout
}

// AskDriver sends req to the driver listening on sock and returns its
// reply.
func AskDriver(sock string, req AgentRequest) (AgentReply, error) {
	conn, err := net.DialTimeout("unix", sock, 10*time.Second)
	if err != nil {
		return AgentReply{}, fmt.Errorf("cannot reach the driver at %s ($%s): %v", sock, SocketEnv, tree.ErrText(err))
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(timeoutOf(req.Verb)))
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return AgentReply{}, fmt.Errorf("the driver at %s: %v", sock, tree.ErrText(err))
	}
	var rep AgentReply
	if err := json.NewDecoder(io.LimitReader(conn, maxRequest)).Decode(&rep); err != nil {
		return AgentReply{}, fmt.Errorf("the driver at %s did not answer: %v", sock, tree.ErrText(err))
	}
	return rep, nil
}

// Ask is one request waiting for the driver's loop.
type Ask struct {
	Req   AgentRequest
	Reply chan AgentReply
}

// Broker listens on the socket for one run and hands each request to the
// driver's loop, which alone acts on the plan and the lease.
type Broker struct {
	ln    *net.UnixListener
	asks  chan Ask
	done  chan struct{}
	once  sync.Once
	agent atomic.Int64  // the agent's pid, once started (SetAgent)
	known chan struct{} // closed when it is
	wg    sync.WaitGroup
}

// SetAgent names the agent the broker serves, once it has started.
func (b *Broker) SetAgent(pid int) {
	if b.agent.CompareAndSwap(0, int64(pid)) {
		close(b.known)
	}
}

// agentWait bounds how long a request waits for its agent to be named: an
// agent that asks at once may connect before its driver has its pid.
const agentWait = 10 * time.Second

// ListenBroker listens on sock for the agent's requests.
func ListenBroker(sock string) (*Broker, error) {
	os.Remove(sock)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return nil, err
	}
	b := &Broker{ln: ln, asks: make(chan Ask), done: make(chan struct{}), known: make(chan struct{})}
	b.wg.Add(1)
	go b.accept()
	return b, nil
}

// maxAsking bounds the connections served at once: an agent that opens
// thousands gets the rest closed, not thousands of goroutines.
const maxAsking = 8

func (b *Broker) accept() {
	defer b.wg.Done()
	slots := make(chan struct{}, maxAsking)
	for {
		conn, err := b.ln.AcceptUnix()
		if err != nil {
			return
		}
		select {
		case slots <- struct{}{}:
		default:
			conn.Close()
			continue
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			defer func() { <-slots }()
			b.serve(conn)
		}()
	}
}

func (b *Broker) serve(conn *net.UnixConn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(askTimeout))
	rep := AgentReply{}
	var req AgentRequest
	if err := b.peerIsAgent(conn); err != nil {
		rep.Error = err.Error()
	} else if err := json.NewDecoder(io.LimitReader(conn, maxRequest)).Decode(&req); err != nil {
		rep.Error = "unreadable request: " + tree.ErrText(err)
	} else {
		conn.SetDeadline(time.Now().Add(timeoutOf(req.Verb)))
		q := Ask{Req: req, Reply: make(chan AgentReply, 1)}
		select {
		case b.asks <- q:
			select {
			case rep = <-q.Reply:
			case <-b.done:
				rep.Error = "the driver has finished this run"
			}
		case <-b.done:
			rep.Error = "the driver has finished this run"
		}
	}
	json.NewEncoder(conn).Encode(rep)
}

// peerIsAgent checks, by the kernel's word on who connected, that the
// caller is the agent or one of its descendants (or an orphan of it the
// driver adopted as subreaper), not another agent or a stranger.
func (b *Broker) peerIsAgent(conn *net.UnixConn) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var peer int
	var cerr error
	raw.Control(func(fd uintptr) { peer, cerr = peerPid(int(fd)) })
	if cerr != nil {
		return fmt.Errorf("cannot tell who is asking: %v", cerr)
	}
	select {
	case <-b.known:
	case <-b.done:
	case <-time.After(agentWait):
	}
	agent, me := int(b.agent.Load()), os.Getpid()
	for pid, n := peer, 0; agent > 0 && pid > 1 && n < 256; n++ {
		if pid == agent {
			return nil
		}
		parent := sandbox.ParentOf(pid)
		if parent == me {
			return nil // an orphan of the agent's that the driver adopted as subreaper
		}
		pid = parent
	}
	return errors.New("refused: only the agent this driver started may ask it")
}

func (b *Broker) close() {
	if b == nil {
		return
	}
	b.once.Do(func() {
		close(b.done)
		b.ln.Close()
	})
	b.wg.Wait()
}

// Requests is the channel the driver's loop reads; nil (never ready) when
// there is no broker.
func (b *Broker) Requests() <-chan Ask {
	if b == nil {
		return nil
	}
	return b.asks
}
