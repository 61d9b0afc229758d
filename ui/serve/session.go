package serve

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/ssh"
	"github.com/muesli/termenv"

	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui"
	"github.com/fleetwatch/fleetwatch/ui/boardtext"
)

// handle is every session: the board for a key's forced command or a
// session without a terminal, the cockpit for one with.
func (s *server) handle(sess ssh.Session) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Printf("a session panicked: %v\n%s", r, debug.Stack())
		}
	}()
	id, ok := s.identity(sess)
	if !ok {
		fmt.Fprint(sess.Stderr(), "fleetwatch: this key is no longer authorized\r\n")
		_ = sess.Exit(1)
		return
	}
	pty, _, isPTY := sess.Pty()
	s.log.Printf("%s %s (%s, lines %s) from %s: session, user %s, term %s %dx%d, command %s",
		id.Agent, id.Fingerprint, role(id), lines(id), sess.RemoteAddr(), clean(sess.User()),
		clean(pty.Term), pty.Window.Width, pty.Window.Height, clean(sess.RawCommand()))
	live := s.track(sess, id)
	defer s.untrack(live)
	start := time.Now()
	switch {
	case id.Rules.Command != "":
		var w io.Writer = sess
		if isPTY {
			w = ssh.NewPtyWriter(sess)
		}
		s.board(sess, w, id, strings.Fields(id.Rules.Command))
	case isPTY:
		s.cockpit(sess, id, pty, live)
	default:
		s.board(sess, sess, id, sess.Command())
	}
	s.log.Printf("%s %s: session ended after %v", id.Agent, id.Fingerprint, time.Since(start).Round(time.Millisecond))
}

// lines names the key lines a session uses, the first few of them.
func lines(id Identity) string {
	if n := len(id.Lines); n > 4 {
		return strings.Join(id.Lines[:4], " ") + fmt.Sprintf(" and %d more", n-4)
	}
	return strings.Join(id.Lines, " ")
}

func role(id Identity) string {
	if id.Viewer {
		return "viewer"
	}
	return "operator"
}

// board writes the board as text or JSON and exits 0 (2 on an error);
// serving several projects, each project's the key may see.
func (s *server) board(sess ssh.Session, w io.Writer, id Identity, cmd []string) {
	var err error
	switch {
	case len(cmd) > 0 && cmd[0] == "log":
		err = s.workerLog(w, id, cmd[1:])
	case len(s.several) > 0:
		err = s.boards(w, id, cmd)
	default:
		var t *planfs.Tree
		if t, err = s.sessionTree(id); err == nil {
			err = writeBoard(w, t, s.opt.Claims, cmd)
		}
	}
	if err != nil {
		fmt.Fprintf(sess.Stderr(), "fleetwatch: %v\n", err)
		_ = sess.Exit(2)
		return
	}
	_ = sess.Exit(0)
}

// writeBoard is `board --once` (100 columns) or, for `board --json`, the JSON.
// With remote claims (c), both are read from c's view.
func writeBoard(w io.Writer, t *planfs.Tree, c *claims.Opened, cmd []string) error {
	remote := c != nil && c.Backend != nil
	switch strings.Join(cmd, " ") {
	case "", "board", "board --once":
		text, err := "", error(nil)
		if remote {
			text, err = boardtext.TextRemote(t, c.Backend, c.Where, 100)
		} else {
			text, err = boardtext.Text(t, 100)
		}
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, text)
		return err
	case "board --json":
		if remote {
			return boardtext.WriteJSONRemote(w, t, c.Backend, c.Where)
		}
		return boardtext.WriteJSON(w, t)
	}
	return fmt.Errorf("%q: this server answers only 'board', 'board --once', 'board --json' and 'log AGENT [N]' without a terminal", clean(strings.Join(cmd, " ")))
}

// sessionTree is the project as this key sees it: read-only for a viewer,
// every event naming the key.
func (s *server) sessionTree(id Identity) (*planfs.Tree, error) {
	return treeFor(s.tree.Project, id, id.Viewer)
}

// treeFor is project as id sees it, read-only for a viewer.
func treeFor(project string, id Identity, viewer bool) (*planfs.Tree, error) {
	t, err := planfs.Open(project)
	if err != nil {
		return nil, err
	}
	t.ReadOnly = viewer
	setVia(t, "ssh "+id.Fingerprint)
	return t, nil
}

// model is the session's program: the cockpit on the project, or over
// the projects the key may see; opt carries the session's look. done
// closes it.
func (s *server) model(id Identity, opt ui.Options) (m tea.Model, done func(), err error) {
	if len(s.several) > 0 {
		return s.severalModel(id, opt)
	}
	if opt.Tree, err = s.sessionTree(id); err != nil {
		return nil, nil, err
	}
	opt.Hub, opt.ReadOnly, opt.Uncontained, opt.StuckAfter = s.hub, id.Viewer, s.opt.Uncontained, s.opt.StuckAfter
	one := ui.New(opt)
	return one, one.Close, nil
}

// cockpit runs one session's UI on its PTY: its own model and renderer,
// fed by the hub. However the program ends, the PTY's slave is closed
// before this returns, so the program's reader and the SSH library's copy
// from the master both end and the pair is freed.
func (s *server) cockpit(sess ssh.Session, id Identity, pty ssh.Pty, live *liveSession) {
	tm := &ptyTerm{slave: pty.Slave, master: pty.Master}
	defer tm.Close()
	if err := tm.makeRaw(); err != nil {
		fmt.Fprintf(sess.Stderr(), "fleetwatch: the session's terminal: %v\r\n", err)
		return
	}
	dark := tm.queryDark(time.Second)
	r := lipgloss.NewRenderer(tm, termenv.WithEnvironment(envList(append(sess.Environ(), "TERM="+pty.Term))),
		termenv.WithUnsafe(), termenv.WithColorCache(true))
	r.SetHasDarkBackground(dark)
	style := "light"
	if dark {
		style = "dark"
	}
	m, closeModel, err := s.model(id, ui.Options{Agent: id.Agent, Renderer: r, NoEditor: true, Self: s.opt.Self, MarkdownStyle: style, Out: tm})
	if err != nil {
		fmt.Fprintf(sess.Stderr(), "fleetwatch: %v\r\n", err)
		return
	}
	// No signal handler: SIGTERM is the server's, which tells every
	// session why before it closes them (a program's own would just quit).
	// The screen draws, not Bubble Tea's renderer: an idle session costs
	// nothing between frames (screen.go).
	scr := newScreen(tm, frameRate)
	p := tea.NewProgram(drawnModel{Model: m, s: scr}, tea.WithInput(tm), tea.WithOutput(tm),
		tea.WithoutRenderer(), tea.WithoutSignalHandler())
	if !live.attach(p) {
		closeModel()
		return
	}
	scr.open()
	s.opt.Terminals.add(scr, s.shown(id), inTmux(sess.Environ(), pty.Term))
	defer s.opt.Terminals.remove(scr)
	ctx, cancel := context.WithCancel(sess.Context())
	go followSize(ctx, tm, p)
	go func() {
		<-ctx.Done()
		p.Quit()
	}()
	if _, err := p.Run(); err != nil && sess.Context().Err() == nil {
		s.log.Printf("%s: the session's program: %v", id.Agent, err)
	}
	cancel()
	scr.close()
	closeModel()
	live.detach()
	if why := live.why(); why != "" {
		_, _ = io.WriteString(tm, "\r\nfleetwatch: "+why+"\r\n")
	}
	if sess.Context().Err() == nil {
		tm.drain()
	}
}

// envList is the client's environment as termenv reads it.
type envList []string

func (e envList) Environ() []string { return e }

func (e envList) Getenv(k string) string {
	for _, v := range e {
		if strings.HasPrefix(v, k+"=") {
			return v[len(k)+1:]
		}
	}
	return ""
}

// followSize tells the program when the session's PTY changes size: the
// SSH library resizes the PTY from the client's window changes, which
// reach no process here, so its size is looked at: four times a second
// while the client is busy (typing, resizing), every two seconds once it
// has been quiet for a while, since each look wakes the server (four a
// second cost an idle session some 0.8 ms of CPU a second).
func followSize(ctx context.Context, tm *ptyTerm, p *tea.Program) {
	w, h, err := tm.size()
	if err != nil {
		return
	}
	// The program has no terminal to ask: it learns its size here first.
	p.Send(tea.WindowSizeMsg{Width: w, Height: h})
	busy := time.Now()
	t := time.NewTimer(sizeBusy)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		nw, nh, err := tm.size()
		if err != nil {
			return
		}
		if nw != w || nh != h {
			w, h, busy = nw, nh, time.Now()
			p.Send(tea.WindowSizeMsg{Width: w, Height: h})
		}
		if typed := tm.typed(); typed.After(busy) {
			busy = typed
		}
		every := sizeBusy
		if time.Since(busy) > sizeQuietAfter {
			every = sizeQuiet
		}
		// On the clock's beat, so the sessions' looks wake the server
		// together rather than each on its own.
		now := time.Now()
		t.Reset(now.Truncate(every).Add(every).Sub(now))
	}
}

// How often followSize looks at the PTY's size: while busy, once quiet,
// and how long without a key or a resize is quiet.
const (
	sizeBusy       = 250 * time.Millisecond
	sizeQuiet      = 2 * time.Second
	sizeQuietAfter = 10 * time.Second
)
