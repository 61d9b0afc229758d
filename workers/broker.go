package workers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/sandbox"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
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
)

// AgentRequest is one verb an agent asks its driver to perform.
type AgentRequest struct {
	Verb   string `json:"verb"`
	Plan   string `json:"plan"` // as the agent named it: a rel, a path or a slug
	Token  string `json:"token"`
	To     string `json:"to,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// AgentReply is the driver's answer: where the plan is now, or why not.
type AgentReply struct {
	Plan  string `json:"plan,omitempty"`
	Error string `json:"error,omitempty"`
}

// maxRequest bounds what the driver reads from an agent.
const maxRequest = 64 << 10

// askTimeout bounds a whole exchange: the driver answers between two
// steps of its loop, well within it.
const askTimeout = 2 * time.Minute

// AskDriver sends req to the driver listening on sock and returns its
// reply.
func AskDriver(sock string, req AgentRequest) (AgentReply, error) {
	conn, err := net.DialTimeout("unix", sock, 10*time.Second)
	if err != nil {
		return AgentReply{}, fmt.Errorf("cannot reach the driver at %s ($%s): %v", sock, SocketEnv, tree.ErrText(err))
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(askTimeout))
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return AgentReply{}, fmt.Errorf("the driver at %s: %v", sock, tree.ErrText(err))
	}
	var rep AgentReply
	if err := json.NewDecoder(io.LimitReader(conn, maxRequest)).Decode(&rep); err != nil {
		return AgentReply{}, fmt.Errorf("the driver at %s did not answer: %v", sock, tree.ErrText(err))
	}
	return rep, nil
}

// ask is one request waiting for the driver's loop.
type ask struct {
	req   AgentRequest
	reply chan AgentReply
}

// broker listens on the socket for one run and hands each request to the
// driver's loop, which alone acts on the plan and the lease.
type broker struct {
	ln    *net.UnixListener
	asks  chan ask
	done  chan struct{}
	once  sync.Once
	agent atomic.Int64 // the agent's pid, once started
	wg    sync.WaitGroup
}

func listenBroker(sock string) (*broker, error) {
	os.Remove(sock)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return nil, err
	}
	b := &broker{ln: ln, asks: make(chan ask), done: make(chan struct{})}
	b.wg.Add(1)
	go b.accept()
	return b, nil
}

// maxAsking bounds the connections served at once: an agent that opens
// thousands gets the rest closed, not thousands of goroutines.
const maxAsking = 8

func (b *broker) accept() {
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

func (b *broker) serve(conn *net.UnixConn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(askTimeout))
	rep := AgentReply{}
	var req AgentRequest
	if err := b.peerIsAgent(conn); err != nil {
		rep.Error = err.Error()
	} else if err := json.NewDecoder(io.LimitReader(conn, maxRequest)).Decode(&req); err != nil {
		rep.Error = "unreadable request: " + tree.ErrText(err)
	} else {
		q := ask{req: req, reply: make(chan AgentReply, 1)}
		select {
		case b.asks <- q:
			select {
			case rep = <-q.reply:
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
func (b *broker) peerIsAgent(conn *net.UnixConn) error {
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

func (b *broker) close() {
	if b == nil {
		return
	}
	b.once.Do(func() {
		close(b.done)
		b.ln.Close()
	})
	b.wg.Wait()
}

// requests is the channel the driver's loop reads; nil (never ready) when
// there is no broker.
func (b *broker) requests() <-chan ask {
	if b == nil {
		return nil
	}
	return b.asks
}

// answer performs one agent request on r's plan, if it is the agent's
// own and carries its lease's token.
func (d *Driver) answer(r *running, q ask) {
	rep := d.perform(r, q.req)
	if rep.Error != "" {
		d.Log.Printf("agent asked to %s %s: refused: %s", q.req.Verb, q.req.Plan, rep.Error)
	} else {
		d.Log.Printf("agent asked to %s %s: done (%s)", q.req.Verb, r.job.Rel, rep.Plan)
	}
	q.reply <- rep
}

func (d *Driver) perform(r *running, req AgentRequest) AgentReply {
	rel, me := r.job.Rel, r.me
	if me.Token != "" && req.Token != me.Token {
		return AgentReply{Error: fmt.Sprintf("the token does not hold %s's lease", rel)}
	}
	if !d.ownPlan(r, req.Plan) {
		return AgentReply{Error: fmt.Sprintf("an agent acts only on its own plan, %s", rel)}
	}
	fail := func(err error) AgentReply { return AgentReply{Error: tree.ErrText(err)} }
	switch req.Verb {
	case AskHeartbeat:
		if lost, _ := d.heartbeat(rel, me); lost != "" {
			return AgentReply{Error: "lease lost: " + lost}
		}
		return AgentReply{Plan: d.Tree.Abs(rel)}
	case AskComplete, AskPark, AskRelease:
	default:
		return AgentReply{Error: fmt.Sprintf("%q is not a verb an agent may ask for", req.Verb)}
	}
	if !d.holds(rel, me) {
		return AgentReply{Error: fmt.Sprintf("%s is no longer held by this run", rel)}
	}
	// What the agent committed goes with the plan it hands on: a plan sent
	// for review without it would be reviewed and landed empty.
	if err := d.bringBranch(r); err != nil && req.Verb == AskComplete {
		return AgentReply{Error: fmt.Sprintf("%s stays with you: your commits could not be brought in (%s); fix your branch and ask again", rel, tree.ErrText(err))}
	}
	var dst string
	var err error
	switch req.Verb {
	case AskComplete:
		to, ok := model.ParseLane(req.To)
		if !ok || !model.RuleOf(model.Complete).Sends(to) {
			return AgentReply{Error: fmt.Sprintf("complete: --to must be %s, not %q", model.Alternatives(model.RuleOf(model.Complete).To), req.To)}
		}
		dst, err = d.completePlan(rel, to, me)
	case AskPark:
		to, ok := model.ParseLane(req.To)
		if !ok || !model.RuleOf(model.Park).Sends(to) {
			return AgentReply{Error: fmt.Sprintf("park: --to must be %s, not %q", model.Alternatives(model.RuleOf(model.Park).To), req.To)}
		}
		why := cmpReason(req.Reason, "parked by the agent")
		if d.Keeper != nil {
			dst, err = d.Keeper.Park(to, why)
		} else {
			dst, err = d.Tree.Park(rel, to, me.Because(why))
		}
	case AskRelease:
		dst, err = d.releasePlan(rel, me, cmpReason(req.Reason, "released by the agent"))
	}
	if err != nil {
		return fail(err)
	}
	r.handedOn = dst
	return AgentReply{Plan: d.Tree.Abs(dst)}
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
