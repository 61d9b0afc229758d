package serve

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/ssh"
	bm "github.com/charmbracelet/wish/bubbletea"
	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"fleetwatch/internal/boardtext"
	"fleetwatch/planfs"
	"fleetwatch/ui"
)

// noPTY answers a session without a terminal with the board as text, or as
// JSON when the command is `board --json`, and exits 0; a session with a
// PTY goes on to the UI.
func (s *server) noPTY(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		if _, _, ok := sess.Pty(); ok {
			next(sess)
			return
		}
		t, err := s.sessionTree(sess)
		if err == nil {
			err = writeBoard(sess, t, s.opt.Claims, sess.Command())
		}
		if err != nil {
			fmt.Fprintf(sess.Stderr(), "fleetwatch: %v\n", err)
			_ = sess.Exit(2)
			return
		}
		_ = sess.Exit(0)
	}
}

// writeBoard is `board --once` (100 columns) or, for `board --json`, the JSON.
// With remote claims (c), both are read from c's view.
func writeBoard(sess ssh.Session, t *planfs.Tree, c *ui.Claims, cmd []string) error {
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
		_, err = io.WriteString(sess, text)
		return err
	case "board --json":
		if remote {
			return boardtext.WriteJSONRemote(sess, t, c.Backend, c.Where)
		}
		return boardtext.WriteJSON(sess, t)
	}
	return fmt.Errorf("%q: this server answers only 'board', 'board --once' and 'board --json' without a terminal", strings.Join(cmd, " "))
}

// sessionTree is the project as this key sees it: read-only for a viewer,
// every event naming the key.
func (s *server) sessionTree(sess ssh.Session) (*planfs.Tree, error) {
	id, ok := identityOf(sess)
	if !ok {
		return nil, fmt.Errorf("no key identity for this session")
	}
	t, err := planfs.Open(s.tree.Project)
	if err != nil {
		return nil, err
	}
	t.ReadOnly = id.Viewer
	setVia(t, "ssh "+id.Fingerprint)
	return t, nil
}

// program is one session's UI: its own model and renderer, fed by the hub.
func (s *server) program(sess ssh.Session) *tea.Program {
	id, ok := identityOf(sess)
	t, err := s.sessionTree(sess)
	if !ok || err != nil {
		fmt.Fprintf(sess.Stderr(), "fleetwatch: %v\r\n", err)
		return nil
	}
	r := bm.MakeRenderer(sess)
	glamour := "light"
	if r.HasDarkBackground() {
		glamour = "dark"
	}
	m := ui.New(ui.Options{Tree: t, Agent: id.Agent, Renderer: r, Hub: s.hub, ReadOnly: id.Viewer,
		NoEditor: true, Self: s.opt.Self, Glamour: glamour, Out: sess, Uncontained: s.opt.Uncontained})
	pty, _, _ := sess.Pty()
	// No signal handler: SIGTERM is the server's, which tells every
	// session why before it closes them (a program's own would just quit).
	opts := append(bm.MakeOptions(sess), tea.WithAltScreen(), tea.WithFPS(30), tea.WithoutSignalHandler())
	fd, master := -1, -1
	if pty.Slave != nil && pty.Master != nil {
		master = int(pty.Master.Fd())
		// The SSH library closes the PTY when the client goes, while the
		// program may still be reading it: behind a plain reader and
		// writer Bubble Tea never asks the file for its descriptor, so
		// that close cannot race it. The PTY is made raw here instead.
		fd = int(pty.Slave.Fd())
		if _, err := term.MakeRaw(fd); err != nil {
			fmt.Fprintf(sess.Stderr(), "fleetwatch: the session's terminal: %v\r\n", err)
			return nil
		}
		opts = append(opts, tea.WithInput(ptyIO{pty.Slave}), tea.WithOutput(ptyIO{pty.Slave}))
	}
	p := tea.NewProgram(m, opts...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		m.Close()
		return nil
	}
	s.programs[p] = m.Close
	sess.Context().SetValue(programKey{}, sessionProgram{p, fd, master})
	if fd >= 0 {
		go followSize(sess.Context(), fd, p)
	}
	return p
}

// programKey is where a session's program is kept in its context.
type programKey struct{}

// sessionProgram is a session's program and its PTY's descriptors (-1: none).
type sessionProgram struct {
	p          *tea.Program
	fd, master int
}

// programDone runs once a session's program has returned: the model's
// watchers close and stop no longer waits for it.
func (s *server) programDone(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		if sp, ok := sess.Context().Value(programKey{}).(sessionProgram); ok {
			if sp.master >= 0 && sess.Context().Err() == nil {
				drain(sp.master)
			}
			s.mu.Lock()
			closeModel := s.programs[sp.p]
			delete(s.programs, sp.p)
			s.mu.Unlock()
			if closeModel != nil {
				closeModel()
			}
		}
		next(sess)
	}
}

// drain waits (a bounded while) until the program's last frame (the
// stopping line, leaving the alternate screen) has been read off the PTY's
// master, so closing the session does not cut it off, then gives the copy
// to the client a moment to send it.
func drain(master int) {
	for range 30 {
		if n, err := unix.IoctlGetInt(master, unix.TIOCINQ); err != nil || n == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(30 * time.Millisecond)
}

// ptyIO is the PTY as a plain reader and writer.
type ptyIO struct{ f *os.File }

func (p ptyIO) Read(b []byte) (int, error)  { return p.f.Read(b) }
func (p ptyIO) Write(b []byte) (int, error) { return p.f.Write(b) }

// followSize tells the program when the session's PTY changes size. The
// SSH library resizes the PTY from the same window-change channel the
// Bubble Tea middleware reads, so either may get a change; a cheap look
// at the PTY's size four times a second catches the ones it misses.
func followSize(ctx context.Context, fd int, p *tea.Program) {
	w, h, err := term.GetSize(fd)
	if err != nil {
		return
	}
	// The program has no terminal to ask: it learns its size here first.
	p.Send(tea.WindowSizeMsg{Width: w, Height: h})
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		nw, nh, err := term.GetSize(fd)
		if err != nil {
			return
		}
		if nw != w || nh != h {
			w, h = nw, nh
			p.Send(tea.WindowSizeMsg{Width: w, Height: h})
		}
	}
}
