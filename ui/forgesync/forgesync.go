// Package forgesync owns the cockpit's background reading of the forge:
// landing.SyncForgeInBackground (the network, seconds, a forge that may never answer)
// run as a tea.Cmd off the UI goroutine, one at a time, every Every while
// the project has a forge and whenever the Merge pane asks (r). The root
// keeps a Sync, routes its two messages to it, and reads the queue and
// the inbox again after each; the Merge pane shows its state (uictx.Forge).
package forgesync

import (
	"context"
	"errors"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/browse"
	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/landing"
)

// Every is how often the forge is read while the cockpit runs: people's
// approvals and comments reach the project with no file saying so.
const Every = 60 * time.Second

// Timeout bounds one reading: a forge that never answers must not hold
// the next one back for ever.
const Timeout = 3 * time.Minute

// Sync is the state of the background reading: whether the project has a
// forge (known after the first reading), one running, one more asked for
// meanwhile, the clock pending, and how the last one ended.
type Sync struct {
	view    uictx.Forge
	again   bool
	ticking bool
	clock   bool // read on the clock too (a local cockpit; a served one reads when asked)
}

// DoneMsg is how one reading ended: On whether the project has a forge,
// Said the lines it did something, Err why it failed.
type DoneMsg struct {
	On   bool
	Said []string
	Err  error
	At   time.Time
}

// TickMsg is the clock's: time to read the forge again.
type TickMsg time.Time

// run is the reading itself, a variable so a test can hold one up.
var run = landing.SyncForgeInBackground

// View is the reading's state, for the Merge pane.
func (s *Sync) View() uictx.Forge { return s.view }

// OnMsg says whether the project has a forge: Begin's look at its
// settings, off the UI goroutine.
type OnMsg bool

// Begin is the cockpit's first look: whether the project has a forge (an
// OnMsg, which On takes); the clock reads it every Every from then on.
func (s *Sync) Begin(t *planfs.Tree) tea.Cmd {
	s.clock = true
	project := t.Project
	return func() tea.Msg { return OnMsg(landing.ForgeOn(project)) }
}

// On takes Begin's answer: with a forge, its first reading starts.
func (s *Sync) On(t *planfs.Tree, on OnMsg) tea.Cmd {
	s.view.On = bool(on)
	if !on {
		return nil
	}
	return s.Start(t)
}

// Start reads the forge in the background unless a reading runs already
// (then it runs once more after); nil when it does not start one.
func (s *Sync) Start(t *planfs.Tree) tea.Cmd {
	if s.view.Busy {
		s.again = true
		return nil
	}
	s.view.Busy = true
	return readCmd(t)
}

// readCmd is one reading: whether the project has a forge, then the forge.
func readCmd(t *planfs.Tree) tea.Cmd {
	return func() tea.Msg {
		if !landing.ForgeOn(t.Project) {
			return DoneMsg{At: time.Now()}
		}
		ctx, cancel := context.WithTimeout(context.Background(), Timeout)
		defer cancel()
		said, err := run(ctx, t)
		if errors.Is(err, context.DeadlineExceeded) {
			err = errors.New("the forge did not answer in " + Timeout.String())
		}
		return DoneMsg{On: true, Said: said, Err: err, At: time.Now()}
	}
}

// Done takes a reading's end: the next one if asked for meanwhile, and
// the clock while the project has a forge.
func (s *Sync) Done(t *planfs.Tree, msg DoneMsg) tea.Cmd {
	s.view = uictx.Forge{On: msg.On, At: msg.At, Err: msg.Err}
	var cmds []tea.Cmd
	if s.again {
		s.again = false
		cmds = append(cmds, s.Start(t))
	}
	if msg.On && s.clock && !s.ticking {
		s.ticking = true
		cmds = append(cmds, tea.Tick(Every, func(at time.Time) tea.Msg { return TickMsg(at) }))
	}
	return tea.Batch(cmds...)
}

// Ticked is the clock's turn: read the forge again.
func (s *Sync) Ticked(t *planfs.Tree) tea.Cmd {
	s.ticking = false
	return s.Start(t)
}

// Said is what a reading did, for the status line: its last line, and
// how many more; "" when it did nothing.
func Said(msg DoneMsg) string {
	n := len(msg.Said)
	if n == 0 {
		return ""
	}
	// The forge's words are hostile: one line, no escapes.
	s := "forge: " + termtext.Line(msg.Said[n-1])
	if n > 1 {
		s += " (and " + kit.Itoa(n-1) + " more)"
	}
	return s
}

// Browse opens url in the operator's browser off the UI goroutine; served
// (the process runs on the server, not where the operator looks) it is
// said instead, for the operator to open; an address that is not one to
// open is refused (bad) and said cleaned.
func Browse(url string, served bool) (cmd tea.Cmd, say string, bad bool) {
	if err := browse.Check(url); err != nil {
		return nil, "✗ open PR: " + termtext.Line(url) + ": " + err.Error(), true
	}
	if served {
		return nil, "PR: " + url + " (this session runs on the server: open it on your machine)", false
	}
	return uictx.Action("open PR", func() (string, error) {
		return "opened " + url + " in your browser", browse.Open(url)
	}), "", false
}
