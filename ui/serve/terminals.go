package serve

import (
	"strings"
	"sync"

	"github.com/fleetwatch/fleetwatch/workers/notify"
)

// Terminals are the terminals of the sessions served, for a project's
// notifier (notify.Options.Term): a terminal notification it writes once
// reaches every session with a cockpit open on that project, between two
// of its frames. With no such session the target is absent, so the notice
// is neither claimed nor lost: it waits for a session, or for a process
// on this machine that has a terminal.
type Terminals struct {
	mu   sync.Mutex
	open map[*screen]sessionTerm
}

// sessionTerm is one session's terminal: the projects (roots) it shows
// and whether its client said it runs in tmux.
type sessionTerm struct {
	roots map[string]bool
	tmux  bool
}

// NewTerminals is an empty set; Options.Terminals hands it to the server,
// which adds each session's screen while its cockpit runs.
func NewTerminals() *Terminals { return &Terminals{open: map[*screen]sessionTerm{}} }

// For is the writer of project root's notifications.
func (ts *Terminals) For(root string) *ProjectTerminals {
	return &ProjectTerminals{ts: ts, root: root}
}

func (ts *Terminals) add(s *screen, roots []string, tmux bool) {
	if ts == nil {
		return
	}
	st := sessionTerm{roots: map[string]bool{}, tmux: tmux}
	for _, r := range roots {
		st.roots[r] = true
	}
	ts.mu.Lock()
	ts.open[s] = st
	ts.mu.Unlock()
}

func (ts *Terminals) remove(s *screen) {
	if ts == nil {
		return
	}
	ts.mu.Lock()
	delete(ts.open, s)
	ts.mu.Unlock()
}

// ProjectTerminals writes one project's notifications to the sessions
// showing it.
type ProjectTerminals struct {
	ts   *Terminals
	root string
}

// Write gives p, whole, to each session showing the project, wrapped for
// tmux where the session runs in it. It never fails: a session that went
// is just not written to.
func (pt *ProjectTerminals) Write(p []byte) (int, error) {
	pt.ts.mu.Lock()
	var to []*screen
	var tmux []bool
	for s, st := range pt.ts.open {
		if st.roots[pt.root] {
			to, tmux = append(to, s), append(tmux, st.tmux)
		}
	}
	pt.ts.mu.Unlock()
	for i, s := range to {
		seq := string(p)
		if tmux[i] {
			seq = notify.WrapTmux(seq)
		}
		s.raw(seq)
	}
	return len(p), nil
}

// Absent is why no session can be written to, "" when one can.
func (pt *ProjectTerminals) Absent() string {
	pt.ts.mu.Lock()
	defer pt.ts.mu.Unlock()
	for _, st := range pt.ts.open {
		if st.roots[pt.root] {
			return ""
		}
	}
	return "no session of fleetwatch serve shows this project"
}

// inTmux reads a session's client environment and terminal type: TMUX is
// seldom sent over SSH, so a TERM tmux sets (tmux, tmux-256color) counts.
func inTmux(env []string, term string) bool {
	if strings.HasPrefix(term, "tmux") {
		return true
	}
	for _, v := range env {
		if strings.HasPrefix(v, "TMUX=") && v != "TMUX=" {
			return true
		}
	}
	return false
}
