package uictx

import (
	"io"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui/kit"
)

// Options are the facts the program needs, settled before it starts.
type Options struct {
	Tree  *planfs.Tree
	Agent string  // who the operator acts as in the event log and leases
	TTL   float64 // lease lifetime for recover, seconds
	// MarkdownStyle is the preview's markdown style (internal/mdterm):
	// "dark", "light" or "notty".
	MarkdownStyle string
	// Renderer decides the colour profile; one per SSH session.
	Renderer *lipgloss.Renderer
	// NoWatch skips the file watchers; tests send changes themselves.
	NoWatch bool
	// Source, when set, brings the tree's changes instead of a watcher
	// of the program's own (one source shared by many sessions); its
	// owner closes it.
	Source Source
	// Self is the fleetwatch binary that spawned workers run (`Self
	// work-once ...`); without it, s explains that it cannot spawn.
	Self string
	// Out is the program's output (the terminal); the bell is written
	// there. Run uses os.Stdout when it is nil; without it, no bell.
	Out io.Writer
	// NoBell keeps the bell quiet; the header still counts notices.
	NoBell bool
	// ReadOnly is a viewer's session: no action key is shown, one pressed
	// is refused with a status line, the header says "read-only", and
	// Tree is a read-only tree, so the engine refuses too.
	ReadOnly bool
	// NoEditor: there is no $EDITOR (a served session has no shell
	// account), so n and e use no external editor.
	NoEditor bool
	// Hub, when set, brings every reading (the board, worktrees, workers,
	// the merge queue, the inbox, the spend) from one owner shared by many
	// sessions, in place of this model's own watchers and reads.
	Hub Shared
	// Uncontained, when set, is the line saying that agents run here
	// unconfined (no Landlock, or `sandbox: off`); the header shows it.
	Uncontained string
	// Claims, when set, is the remote claims backend (git, etcd) the
	// lanes and leases are read from and the verbs go through
	// (ui's remote.go); nil is the local lease files. A hub's sessions take
	// the hub's.
	Claims *claims.Opened
	// Demo is `fleetwatch demo`'s session: until the first key, the
	// footer says how to see the fleet work (demoHint).
	Demo bool
	// Notify, when set, is offered every notice true at each look: the
	// notifier (workers/notify) sends each once, off this goroutine.
	// StuckAfter is how long a claimed plan may go without a commit
	// before it is a notice; 0 never.
	Notify     func([]model.Notice)
	StuckAfter time.Duration
}

// Source brings word of changes to the tree: the program's own watcher
// locally; one shared by many sessions when served.
type Source interface {
	Changes() <-chan planfs.Change
	Close() error
}

// Shared is what the sessions one hub serves (ui.Hub) draw alike: the
// panes' rows and the frames' lines, each made once for them all.
type Shared interface {
	Shared() (*kit.RowCache, *kit.LineMemo)
}
