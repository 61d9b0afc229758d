package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"sync"
	"time"

	"github.com/charmbracelet/ssh"
	"github.com/charmbracelet/wish"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// Options are `fleetwatch serve`'s flags.
type Options struct {
	Root           string // the project (its .plans/ is found below it)
	Listen         string // host:port, e.g. 127.0.0.1:2222
	AuthorizedKeys string // operators' keys, OpenSSH authorized_keys format
	Viewers        string // viewers' keys, same format; "" for none
	HostKey        string // "" means var/fleet/serve/host_ed25519, made once
	Self           string // the fleetwatch binary spawned workers run
	// Uncontained, when set, is the line every session's header shows:
	// agents here run unconfined.
	Uncontained string
	// StuckAfter is how long a claimed plan may go without a commit before
	// the sessions' headers call it stuck (notify: stuck_after); 0 never.
	StuckAfter time.Duration
	Log        io.Writer
	// Ready, when set, is called with the address listened on once the
	// server accepts connections (tests listen on port 0).
	Ready func(addr string)
	// Claims, when set, is the remote claims backend (git, etcd) every
	// session's board is read from and acts through; nil is the lease
	// files. Its owner closes it.
	Claims *claims.Opened
	// Limits bound sessions and logins; zero fields are the defaults.
	Limits Limits
	// Terminals, when set, gets each session's terminal while its cockpit
	// runs, for the projects' notifiers' terminal notifications.
	Terminals *Terminals
	// Projects, when set, are several projects served at once (the first
	// is Root), each key seeing those it has a role on (projects.go).
	Projects []Project
}

// StopReason is the line every session shows when the server stops.
const StopReason = "fleetwatch serve is stopping"

// server is one running `fleetwatch serve`.
type server struct {
	opt  Options
	lim  Limits
	tree *planfs.Tree
	keys *Keyring
	hub  *ui.Hub
	log  *log.Logger
	// several are the projects served, when more than Root (projects.go).
	several []servedProject

	mu       sync.Mutex
	live     map[*liveSession]struct{}
	stopping bool
	pending  int            // connections with no session yet
	sessions int            // sessions open
	byKey    map[string]int // sessions open, by key fingerprint
	warned   map[string]time.Time
	quiet    map[string]int // refusals not logged, by kind
}

// Run serves until ctx ends (SIGTERM, SIGINT), then tells every session,
// closes them and the listener, and returns nil.
func Run(ctx context.Context, opt Options) error {
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	s, srv, ln, err := setup(opt)
	if err != nil {
		return err
	}
	defer s.hub.Close()
	defer s.closeServed()
	// Drivers here publish where their logs can be asked for.
	for _, project := range s.roots() {
		if gone, err := look.WriteServeAddress(project, reachable(ln.Addr())); err == nil {
			defer gone()
		}
	}
	if opt.Ready != nil {
		opt.Ready(ln.Addr().String())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go s.watchKeys(watchCtx)
	select {
	case err := <-served:
		if !errors.Is(err, ssh.ErrServerClosed) {
			return fmt.Errorf("serve %s: %v", opt.Listen, err)
		}
		return nil
	case <-ctx.Done():
	}
	s.stop(srv)
	<-served
	return nil
}

// setup does everything that can fail before the server listens.
func setup(opt Options) (*server, *ssh.Server, net.Listener, error) {
	keys, err := LoadKeys(opt.AuthorizedKeys, opt.Viewers, opt.Log)
	if err != nil {
		return nil, nil, nil, err
	}
	t, err := planfs.Open(opt.Root)
	if err != nil {
		return nil, nil, nil, err
	}
	pemData, err := hostKey(t.Project, opt.HostKey)
	if err != nil {
		return nil, nil, nil, err
	}
	hub, err := ui.NewHubClaims(t, opt.Claims)
	if err != nil {
		return nil, nil, nil, err
	}
	s := &server{opt: opt, lim: opt.Limits.withDefaults(), tree: t, keys: keys, hub: hub,
		live: map[*liveSession]struct{}{}, byKey: map[string]int{}, warned: map[string]time.Time{}, quiet: map[string]int{},
		log: log.New(opt.Log, "fleetwatch serve: ", log.LstdFlags)}
	srv, err := wish.NewServer(
		wish.WithHostKeyPEM(pemData),
		// A real PTY per session: the colour query times out on it when a
		// client never answers, and Bubble Tea reads a tty.
		ssh.AllocatePty(),
		wish.WithPublicKeyAuth(s.auth),
		func(srv *ssh.Server) error {
			srv.Handler = s.handle
			srv.ConnCallback = s.accept
			srv.ConnectionFailedCallback = s.failed
			// Sessions only: no port forwarding channel, no global request
			// (the library refuses what has no handler).
			srv.ChannelHandlers = map[string]ssh.ChannelHandler{"session": s.sessionChannel}
			return nil
		},
	)
	if err != nil {
		hub.Close()
		return nil, nil, nil, err
	}
	if err := s.openServed(); err != nil {
		hub.Close()
		return nil, nil, nil, err
	}
	ln, err := net.Listen("tcp", opt.Listen)
	if err != nil {
		hub.Close()
		s.closeServed()
		return nil, nil, nil, fmt.Errorf("--listen %s: %v", opt.Listen, err)
	}
	return s, srv, ln, nil
}

// auth refuses a key in neither file, or none of whose lines' from=
// allows the client's address, so a client offering several goes on to
// its next one. Which key was verified is read from the connection
// afterwards.
func (s *server) auth(ctx ssh.Context, key ssh.PublicKey) bool {
	e, ok := s.keys.entry(key)
	if !ok {
		return false
	}
	if _, ok := e.at(ctx.RemoteAddr()); !ok {
		s.warn("from", "refused %s from %s: no line of it has a from= that allows that address", e.fingerprint, ctx.RemoteAddr())
		return false
	}
	return true
}

// identity is the session's verified key as the files say now, for the
// client's address.
func (s *server) identity(sess ssh.Session) (Identity, bool) {
	key := sess.PublicKey()
	if key == nil {
		return Identity{}, false
	}
	return s.keys.Lookup(key, sess.RemoteAddr())
}

// failed logs a connection that ended before its session.
func (s *server) failed(c net.Conn, err error) {
	s.warn("failed", "a connection from %s ended before a session: %s", c.RemoteAddr(), clean(err.Error()))
}

// warn logs a refusal, at most one of a kind every 5 s (a client must
// not fill the log), saying how many were not logged.
func (s *server) warn(kind, format string, args ...any) {
	s.mu.Lock()
	last, seen := s.warned[kind]
	if seen && time.Since(last) < 5*time.Second {
		s.quiet[kind]++
		s.mu.Unlock()
		return
	}
	n := s.quiet[kind]
	delete(s.quiet, kind)
	s.warned[kind] = time.Now()
	s.mu.Unlock()
	if n > 0 {
		format += fmt.Sprintf(" (and %d more like it)", n)
	}
	s.log.Printf(format, args...)
}

// clean is text a client chose, safe on the terminal that reads the log
// and at most 200 characters.
func clean(s string) string {
	r := []rune(termtext.Line(s))
	if len(r) > 200 {
		return string(r[:200]) + "…"
	}
	return string(r)
}

// stop tells every session, lets their programs quit, then closes the
// connections and the listener.
func (s *server) stop(srv *ssh.Server) {
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	for _, l := range s.open() {
		l.end(StopReason)
	}
	// The programs quit on StopMsg; give them a moment to draw the line
	// and leave the alternate screen before the connections close.
	deadline := time.Now().Add(700 * time.Millisecond)
	for time.Now().Before(deadline) && len(s.open()) > 0 {
		time.Sleep(20 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		_ = srv.Close()
	}
}
