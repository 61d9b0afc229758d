package serve

import (
	"fmt"
	"io"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/ssh"
	bm "github.com/charmbracelet/wish/bubbletea"

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
			err = writeBoard(sess, t, sess.Command())
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
func writeBoard(sess ssh.Session, t *planfs.Tree, cmd []string) error {
	switch strings.Join(cmd, " ") {
	case "", "board", "board --once":
		text, err := boardtext.Text(t, 100)
		if err != nil {
			return err
		}
		_, err = io.WriteString(sess, text)
		return err
	case "board --json":
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
		NoEditor: true, Self: s.opt.Self, Glamour: glamour, Out: sess, NoBell: false})
	opts := append(bm.MakeOptions(sess), tea.WithAltScreen(), tea.WithFPS(30))
	p := tea.NewProgram(m, opts...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		m.Close()
		return nil
	}
	s.programs[p] = m.Close
	sess.Context().SetValue(programKey{}, p)
	return p
}

// programKey is where a session's program is kept in its context.
type programKey struct{}

// programDone runs once a session's program has returned: the model's
// watchers close and stop no longer waits for it.
func (s *server) programDone(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		if p, ok := sess.Context().Value(programKey{}).(*tea.Program); ok {
			s.mu.Lock()
			closeModel := s.programs[p]
			delete(s.programs, p)
			s.mu.Unlock()
			if closeModel != nil {
				closeModel()
			}
		}
		next(sess)
	}
}
