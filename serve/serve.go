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

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/ssh"
	"github.com/charmbracelet/wish"
	"github.com/charmbracelet/wish/activeterm"
	bm "github.com/charmbracelet/wish/bubbletea"
	"github.com/charmbracelet/wish/logging"
	"github.com/charmbracelet/wish/recover"
	"github.com/muesli/termenv"

	"fleetwatch/planfs"
	"fleetwatch/ui"
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
	Log         io.Writer
	// Ready, when set, is called with the address listened on once the
	// server accepts connections (tests listen on port 0).
	Ready func(addr string)
	// Claims, when set, is the remote claims backend (git, etcd) every
	// session's board is read from and acts through; nil is the lease
	// files. Its owner closes it.
	Claims *ui.Claims
}

// StopReason is the line every session shows when the server stops.
const StopReason = "fleetwatch serve is stopping"

// server is one running `fleetwatch serve`.
type server struct {
	opt  Options
	tree *planfs.Tree
	keys *Keyring
	hub  *ui.Hub
	log  *log.Logger

	mu       sync.Mutex
	programs map[*tea.Program]func() // each open program and its model's Close
	stopping bool
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
	if opt.Ready != nil {
		opt.Ready(ln.Addr().String())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
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
	s := &server{opt: opt, tree: t, keys: keys, hub: hub, programs: map[*tea.Program]func(){},
		log: log.New(opt.Log, "fleetwatch serve: ", log.LstdFlags)}
	srv, err := wish.NewServer(
		wish.WithHostKeyPEM(pemData),
		// A real PTY per session: the renderer's background query times
		// out on it when a client never answers, and Bubble Tea reads a tty.
		ssh.AllocatePty(),
		wish.WithPublicKeyAuth(s.auth),
		wish.WithMiddleware(
			recover.MiddlewareWithLogger(s.log, s.programDone,
				bm.MiddlewareWithProgramHandler(s.program, termenv.Ascii),
				activeterm.Middleware()),
			logging.MiddlewareWithLogger(s.log),
			s.noPTY,
		),
	)
	if err != nil {
		hub.Close()
		return nil, nil, nil, err
	}
	ln, err := net.Listen("tcp", opt.Listen)
	if err != nil {
		hub.Close()
		return nil, nil, nil, fmt.Errorf("--listen %s: %v", opt.Listen, err)
	}
	return s, srv, ln, nil
}

// identityKey is where a connection's Identity is kept in its context.
type identityKey struct{}

// auth refuses a key in neither file here, so a client offering several
// goes on to its next one.
func (s *server) auth(ctx ssh.Context, key ssh.PublicKey) bool {
	id, ok := s.keys.Lookup(key)
	if ok {
		ctx.SetValue(identityKey{}, id)
	}
	return ok
}

func identityOf(sess ssh.Session) (Identity, bool) {
	id, ok := sess.Context().Value(identityKey{}).(Identity)
	return id, ok
}

// stop tells every session, lets their programs quit, then closes the
// connections and the listener.
func (s *server) stop(srv *ssh.Server) {
	s.mu.Lock()
	s.stopping = true
	progs := make([]*tea.Program, 0, len(s.programs))
	for p := range s.programs {
		progs = append(progs, p)
	}
	s.mu.Unlock()
	for _, p := range progs {
		p.Send(ui.StopMsg{Reason: StopReason})
	}
	// The programs quit on StopMsg; give them a moment to draw the line
	// and leave the alternate screen before the connections close.
	deadline := time.Now().Add(700 * time.Millisecond)
	for time.Now().Before(deadline) && s.open() > 0 {
		time.Sleep(20 * time.Millisecond)
	}
	s.mu.Lock()
	for p := range s.programs {
		p.Quit()
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		_ = srv.Close()
	}
}

func (s *server) open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.programs)
}
