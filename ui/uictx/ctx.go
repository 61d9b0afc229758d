package uictx

import (
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/workers/landing"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// Ctx is what a pane sees, and all it sees: the shared context, the
// latest reading, which pane is on screen and what is selected there, and
// the few facts of the root a pane reads. A pane never holds the root
// model: it asks for anything else (a question, a detail, a reload, a
// status line) by returning a request (below), which the root routes in
// one place (ui's route). Built afresh for each call, never kept.
type Ctx struct {
	*Common
	D      *Data     // the latest reading; nil before the first
	Shown  PaneID    // the pane on screen
	Target Selection // what the shown pane's cursor is on
	// Claims is the remote claims backend and View its last good read;
	// both nil for the local lease files (View also before the first read).
	Claims *claims.Opened
	View   *claims.View
	// StateProblems are the workers' state files that could not be read,
	// which the Events pane lists.
	StateProblems []string
	// Fleet is the last reading of the spend, nil before the first;
	// Running the live runs and what each has spent so far.
	Fleet   *FleetMsg
	Running []look.State
	// Inbox is the coordinator's inbox, nil before the first reading.
	Inbox *Inbox
	// Paused are the runs paused where they are, from the spend's
	// reading, which the Inbox lists.
	Paused []look.State
	// Reading: the selected plan is open full screen (the reader).
	Reading bool
	// Workers are the workers as last judged, nil before the first
	// reading.
	Workers *Workers
	// Merge is the merge listing, which the Merge and Plans panes read.
	Merge *Merge
	// Preview is the selected plan's, which the Plans pane draws.
	Preview *Preview
}

// Rows are a table's visible rows, drawn in this session's context.
func (c *Ctx) Rows(t *kit.Table, blank string) []string { return t.Lines(c.Common, blank) }

// TableBox draws a pane's table: boxed on wide terminals, bare on narrow.
func (c *Ctx) TableBox(title, header string, t *kit.Table, h int, empty string) []string {
	rows := c.Rows(t, "")
	if t.Len() == 0 {
		rows[0] = "  " + c.St.Dim.Render(empty)
	}
	body := append([]string{c.St.Header.Render(header)}, rows...)
	if !c.Wide {
		return body
	}
	hint := t.ScrollHint()
	if hint == "" {
		hint = kit.Itoa(t.Len())
	}
	return c.Box(title, hint, body, c.Cols, h, true)
}

// PaneID is a pane's place in the registry: its tab, its number key less
// one. A pane is given its own, to tell when it is the one shown.
type PaneID int

// Pane is one pane of the cockpit: it is sized, derives its rows
// from the data, answers the keys that are its own, and draws itself. What
// it offers the key map is its table's selection.
type Pane interface {
	SetSize(w, h int)
	Rebuild(c *Ctx)
	// Update answers a key the pane owns; handled is false for the rest.
	// What it asks of the root (a question, a detail, a command to run) is
	// the message it returns (a request, below).
	Update(c *Ctx, msg tea.KeyMsg) (req tea.Msg, handled bool)
	View(c *Ctx, h int) []string
	List() *kit.Table
	// Selected is what the cursor is on, for the key map and the verbs.
	Selected() Selection
	// SyncKeys enables the pane's own keys for the selection.
	SyncKeys(c *Ctx, set SetKey)
	// FilterOf is the pane's own filter (kit.Filter).
	FilterOf() *kit.Filter
}

// Selection is what a pane offers the key map: the plan or lease under
// the cursor; the rest are nil.
type Selection struct {
	Rel   string
	Row   *model.BoardRow
	Lease *model.Lease
}

// SetKey enables a binding or not, and remembers why for its keys.
type SetKey func(b *key.Binding, ok bool, why string)

// What a pane asks of the root, returned from its Update for ui's route
// to do at once: a tea.Cmd is run as it is; the rest open an overlay or
// say something, which only the root may. A question is AskReq or
// QuestionReq (below); the root draws it as its dialog.
type (
	// DetailReq opens a detail; read runs off the UI goroutine and must
	// copy what it needs (ui's openDetail).
	DetailReq struct {
		ID, Title string
		Read      func() func(c *Ctx) []string
	}
	// DiffReq opens a diff computed off the UI goroutine (ui's openDiff).
	DiffReq struct {
		What, Req string
		Compute   func() (look.Diff, error)
	}
	// StatusReq says text in the status line.
	StatusReq struct {
		Text string
		Err  bool
	}
	// LogsReq opens the logs of the marked workers, else the selected one
	// (ui's openLogs).
	LogsReq struct{}
	// MoveReq moves the shown pane's cursor (ui's moveCursor).
	MoveReq int
	// SelectedReq: the pane's selection changed under the root (another
	// lane), so the keys and the preview follow it.
	SelectedReq struct{}
	// ReaderReq opens the selected plan full screen.
	ReaderReq struct{}
	// NewPlanReq and EditReq start writing a plan (ui's newplan.go, edit.go).
	NewPlanReq struct{}
	EditReq    struct{}
	// PreviewScrollReq scrolls the preview by half its height: down for
	// a positive number, up for a negative one.
	PreviewScrollReq int
	// BatchReq is several requests, done in order.
	BatchReq []tea.Msg
)

// Detail asks for a detail: read runs off the UI goroutine.
func Detail(id, title string, read func() func(c *Ctx) []string) DetailReq {
	return DetailReq{ID: id, Title: title, Read: read}
}

// Diff asks for a diff computed off the UI goroutine.
func Diff(what, req string, compute func() (look.Diff, error)) DiffReq {
	return DiffReq{What: what, Req: req, Compute: compute}
}

// Status asks to say text in the status line, as an error or not.
func Status(text string, isErr bool) StatusReq { return StatusReq{Text: text, Err: isErr} }

// Loader is a pane that takes a reading of its own, which the root's feed
// brings as a message: Loaded takes msg, reporting whether it was one of
// the pane's; the pane rebuilds its rows from it.
type Loader interface {
	Loaded(c *Ctx, msg tea.Msg) bool
}

// WorktreesMsg is git's look at the agents' worktrees, which the
// Worktrees pane shows.
type WorktreesMsg struct {
	States []look.WorktreeState
	Err    error
}

// Question is a dialog a pane asks the root to open: an optional choice of
// lane, an optional text field, what will happen, and what enter does.
type Question struct {
	Title   string
	Body    []string
	Choices []model.Lane
	Input   *textinput.Model
	Verb    string // what enter does, e.g. "promote"
	Do      func(to model.Lane, text string) tea.Cmd
	// Refuse, when set, keeps the dialog open with its reason while the
	// answer cannot be taken (an empty note).
	Refuse func(to model.Lane, text string) string
}

// AskReq asks Q about the plan at Rel, whose lease was Lease as shown:
// the root takes the answer only while the plan and its lease are as
// they were. With Verb set, confirming is the verb through the project's
// claims backend (the lease files' own, or the remote's).
type AskReq struct {
	Q     Question
	Rel   string
	Lease *model.Lease
	Verb  model.Verb
	// Force acts over what the dialog warned of (someone else's lease, an
	// incomplete draft); a remote verb always does, as its dialog said.
	Force bool
}

// QuestionReq opens Q as it is, about no plan.
type QuestionReq struct{ Q Question }

// PublishedReq opens the detail of P, a worker another machine
// publishes, as seen since SeenAt: read again and its log fetched through
// the claims backend, which the root holds.
type PublishedReq struct {
	P      look.Published
	SeenAt time.Time
}

// RemoteStopReq asks Q, which confirms asking St, a worker on another
// machine, to stop through the claims backend; the root fills in Do.
type RemoteStopReq struct {
	Q  Question
	St look.State
}

// MaxLogPanes is how many logs show side by side, so how many workers
// can be marked for them.
const MaxLogPanes = 4

// WorkerReq opens the detail of the worker AgentID, as the Workers pane
// shows it.
type WorkerReq struct{ AgentID string }

// Merge is the merge listing as the root last read it (landing.List),
// read-only: sessions of a hub share it. Err is why the last reading
// failed (the listing is then the last good one); Loaded that one came;
// Want a candidate to select once the listing shows it (a notice's).
type Merge struct {
	Listing landing.Listing
	Err     error
	Loaded  bool
	Want    string
	// Forge is the background reading of the forge (zero without one).
	Forge Forge
}

// LandDoneMsg is how a landing started here ended: Err is the lander's
// exit, and the last line of its log says what happened.
type LandDoneMsg struct {
	Slug, Commit, Log string
	Err               error
}
