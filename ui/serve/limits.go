package serve

import (
	"net"
	"sync"
	"time"

	"github.com/charmbracelet/ssh"
	gossh "golang.org/x/crypto/ssh"
)

// Limits bound what a client controls. The zero value of a field is its
// default (see withDefaults).
type Limits struct {
	// Sessions open at once, in all and per key.
	Sessions, SessionsPerKey int
	// LoginTimeout is how long a connection may take from its first byte
	// to its first session (the handshake and authentication);
	// LoginIdle how long it may stay silent while it has no session.
	LoginTimeout, LoginIdle time.Duration
	// SessionLength, when set, ends every session that long after it opened.
	SessionLength time.Duration
}

// Fixed bounds: a terminal larger than this cannot be shown anyway, and a
// session needs a handful of environment variables at most.
const (
	maxCols, maxRows   = 1000, 500
	maxEnvVars         = 64
	maxEnvBytes        = 16 << 10
	maxSessionsPerConn = 10   // OpenSSH's MaxSessions
	maxPending         = 1024 // connections without a session yet, in all
)

func (l Limits) withDefaults() Limits {
	if l.Sessions <= 0 {
		l.Sessions = 256
	}
	if l.SessionsPerKey <= 0 {
		l.SessionsPerKey = 32
	}
	if l.LoginTimeout <= 0 {
		l.LoginTimeout = 60 * time.Second
	}
	if l.LoginIdle <= 0 {
		l.LoginIdle = 30 * time.Second
	}
	return l
}

// guardedConn is a client's TCP connection. While it has no session open
// it must keep talking (LoginIdle) and, until its first session, finish
// logging in by a deadline (LoginTimeout). The SSH library sets the
// deadline before every read and write (to none, as we configure it);
// SetDeadline is where those bounds are put back.
type guardedConn struct {
	net.Conn
	lim      Limits
	deadline time.Time // of the login; zero once a session opened

	mu       sync.Mutex
	sessions int
	release  func() // gives back its place among the pending connections
}

// bound is our deadline now, zero for none; c.mu is held.
func (c *guardedConn) bound(now time.Time) time.Time {
	if c.sessions > 0 {
		return time.Time{}
	}
	t := now.Add(c.lim.LoginIdle)
	if !c.deadline.IsZero() && c.deadline.Before(t) {
		t = c.deadline
	}
	return t
}

// SetDeadline keeps the library's deadline unless ours is sooner. The
// lock is held while it is set, so a session opening meanwhile cannot
// have its "no deadline" overwritten by one computed before it.
func (c *guardedConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.bound(time.Now()); !b.IsZero() && (t.IsZero() || b.Before(t)) {
		t = b
	}
	return c.Conn.SetDeadline(t)
}

// opened follows a session counted on the connection (takeSession),
// closed one ended; the read already waiting keeps the deadline it was
// given, so it is set here too.
func (c *guardedConn) opened() {
	c.mu.Lock()
	c.deadline = time.Time{}
	release := c.release
	c.release = nil
	_ = c.Conn.SetDeadline(time.Time{})
	c.mu.Unlock()
	if release != nil {
		release()
	}
}

func (c *guardedConn) closed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sessions--
	_ = c.Conn.SetDeadline(c.bound(time.Now()))
}

func (c *guardedConn) Close() error {
	c.mu.Lock()
	release := c.release
	c.release = nil
	c.mu.Unlock()
	if release != nil {
		release()
	}
	return c.Conn.Close()
}

// connKey is where a connection's guardedConn is kept in its context.
type connKey struct{}

// accept wraps a new connection, or refuses it (nil) when too many are
// still logging in.
func (s *server) accept(ctx ssh.Context, c net.Conn) net.Conn {
	s.mu.Lock()
	if s.pending >= maxPending {
		s.mu.Unlock()
		s.warn("pending", "refused a connection from %s: %d connections are still logging in", c.RemoteAddr(), maxPending)
		return nil
	}
	s.pending++
	s.mu.Unlock()
	g := &guardedConn{Conn: c, lim: s.lim, deadline: time.Now().Add(s.lim.LoginTimeout)}
	g.release = func() {
		s.mu.Lock()
		s.pending--
		s.mu.Unlock()
	}
	if err := g.SetDeadline(time.Time{}); err != nil {
		_ = g.Close()
		return nil
	}
	ctx.SetValue(connKey{}, g)
	return g
}

// sessionChannel is the "session" channel handler: it counts the session
// against its connection, its key and the server, and screens the
// channel's requests before the SSH library's own handler sees them.
func (s *server) sessionChannel(srv *ssh.Server, conn *gossh.ServerConn, nc gossh.NewChannel, ctx ssh.Context) {
	g, _ := ctx.Value(connKey{}).(*guardedConn)
	key, _ := ctx.Value(ssh.ContextKeyPublicKey).(ssh.PublicKey)
	if g == nil || key == nil {
		_ = nc.Reject(gossh.Prohibited, "no key")
		return
	}
	id, ok := s.keys.Lookup(key, conn.RemoteAddr())
	if !ok {
		_ = nc.Reject(gossh.Prohibited, "this key is no longer authorized here")
		return
	}
	release, why := s.takeSession(g, id.Fingerprint)
	if why != "" {
		s.warn("sessions", "refused a session for %s: %s", id.Fingerprint, why)
		_ = nc.Reject(gossh.ResourceShortage, why)
		return
	}
	defer release()
	ssh.DefaultSessionHandler(srv, conn, &screenedChannel{NewChannel: nc, s: s, rules: id.Rules}, ctx)
}

// takeSession counts one more session or says which bound it would pass.
func (s *server) takeSession(g *guardedConn, fp string) (func(), string) {
	s.mu.Lock()
	g.mu.Lock()
	why := ""
	switch {
	case g.sessions >= maxSessionsPerConn:
		why = "too many sessions on this connection"
	case s.byKey[fp] >= s.lim.SessionsPerKey:
		why = "too many sessions for this key"
	case s.sessions >= s.lim.Sessions:
		why = "too many sessions on this server"
	default:
		g.sessions++
		s.sessions++
		s.byKey[fp]++
	}
	g.mu.Unlock()
	s.mu.Unlock()
	if why != "" {
		return nil, why
	}
	g.opened()
	return func() {
		s.mu.Lock()
		s.sessions--
		if s.byKey[fp]--; s.byKey[fp] == 0 {
			delete(s.byKey, fp)
		}
		s.mu.Unlock()
		g.closed()
	}, ""
}

// screenedChannel hands the SSH library a session channel whose requests
// have been screened.
type screenedChannel struct {
	gossh.NewChannel
	s     *server
	rules Rules
}

func (c *screenedChannel) Accept() (gossh.Channel, <-chan *gossh.Request, error) {
	ch, reqs, err := c.NewChannel.Accept()
	if err != nil {
		return ch, reqs, err
	}
	out := make(chan *gossh.Request)
	go c.s.screen(reqs, out, c.rules)
	return ch, out, nil
}

// barrier is a request the library answers with nothing (it wants no
// reply): handing it over means the requests before it have been answered,
// so a refusal sent next keeps the replies in order.
var barrier = &gossh.Request{Type: "fleetwatch-barrier"}

// screen passes the requests on, the terminal's size clamped, and refuses
// the ones a client must not have: agent and X11 forwarding, a terminal
// for a no-pty key, environment variables past the bounds.
func (s *server) screen(in <-chan *gossh.Request, out chan<- *gossh.Request, rules Rules) {
	defer close(out)
	var env envCount
	for req := range in {
		refuse := refusal(req, rules, &env)
		if refuse == "" {
			out <- req
			continue
		}
		if req.WantReply {
			out <- barrier
		}
		_ = req.Reply(false, nil)
		s.warn("refused:"+req.Type, "refused %s", refuse)
	}
}

// envCount is how many environment variables a session asked for, and
// their bytes.
type envCount struct{ n, bytes int }

// refusal says why req is refused, "" when it passes (its terminal size
// clamped); env counts the session's environment variables.
func refusal(req *gossh.Request, rules Rules, env *envCount) string {
	switch req.Type {
	case "pty-req":
		if rules.NoPTY {
			return "a terminal for a no-pty key"
		} else if !clampPtyReq(req) {
			return "a malformed pty-req"
		}
	case "window-change":
		if !clampWindow(req) {
			return "a malformed window-change"
		}
	case "env":
		env.n++
		env.bytes += len(req.Payload)
		if env.n > maxEnvVars || env.bytes > maxEnvBytes {
			return "environment variables past the bound"
		}
	case "auth-agent-req@openssh.com":
		return "agent forwarding"
	case "x11-req":
		return "X11 forwarding"
	}
	return ""
}

// clampPtyReq rewrites a pty-req's size to at most maxCols×maxRows.
func clampPtyReq(req *gossh.Request) bool {
	var m struct {
		Term                 string
		Cols, Rows, PxW, PxH uint32
		Modes                string
	}
	if gossh.Unmarshal(req.Payload, &m) != nil {
		return false
	}
	m.Cols, m.Rows = min(m.Cols, maxCols), min(m.Rows, maxRows)
	req.Payload = gossh.Marshal(&m)
	return true
}

// clampWindow does the same for a window-change.
func clampWindow(req *gossh.Request) bool {
	var m struct{ Cols, Rows, PxW, PxH uint32 }
	if gossh.Unmarshal(req.Payload, &m) != nil {
		return false
	}
	m.Cols, m.Rows = min(m.Cols, maxCols), min(m.Rows, maxRows)
	req.Payload = gossh.Marshal(&m)
	return true
}
