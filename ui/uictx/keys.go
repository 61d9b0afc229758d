package uictx

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// KeyMap is every key the program answers to: the keys that mean the
// same everywhere, then each pane's own, so a key may mean one thing in
// one pane and another elsewhere. Bindings that cannot apply to the
// current selection are disabled, so the footer names only what works
// now and `?` greys them with the reason.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	NextPane, PrevPane                      key.Binding
	// Panes jumps to a pane by its number, from the pane list.
	Panes         []key.Binding
	Escape, Spawn key.Binding
	// Filter narrows the shown pane (in Plans, every lane at once).
	Filter     key.Binding
	Help, Quit key.Binding
	// Notices lists what needs a person (ui's notices.go).
	Notices key.Binding
	// Interrupt quits from anywhere but a question; Close leaves the logs
	// or the reader.
	Interrupt, Close key.Binding
	Ask              AskKeys
	Form             FormKeys

	Plans   PlanKeys
	Leases  LeaseKeys
	Trees   TreeKeys
	Workers WorkerKeys
	Events  EventKeys
	Merge   MergeKeys
	Inbox   InboxKeys
	Fleet   FleetKeys
	Logs    LogKeys
	// Projects move between the projects of a cockpit over several
	// (ui's projects.go); unbound in a cockpit on one.
	Projects ProjectKeys
}

// LogKeys are the log view's: wrap, zoom, and sideways scrolling.
type LogKeys struct{ Wrap, Zoom, Left, Right key.Binding }

// AskKeys answer a dialog, and the filter's confirm and cancel.
type AskKeys struct {
	Confirm, Cancel key.Binding
	Next, Prev      key.Binding // tab: the next choice, also beside a text field
	Right, Left     key.Binding // the arrows: the next choice, or the cursor in a text field
	Yes, No         key.Binding // without a text field
}

// FormKeys move through the spawn form.
type FormKeys struct {
	NextField, PrevField key.Binding
	NextValue, PrevValue key.Binding // on a choice: change it
}

// DefaultKeys are the bindings but the panes' number keys.
func DefaultKeys() KeyMap {
	b := func(help string, keys ...string) key.Binding {
		k := keys[0]
		switch k {
		case "up":
			k = "↑/k"
		case "down":
			k = "↓/j"
		case "left":
			k = "←/["
		case "right":
			k = "→/]"
		}
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, help))
	}
	return KeyMap{
		Up:        b("up", "up", "k"),
		Down:      b("down", "down", "j"),
		PageUp:    b("page up", "pgup", "ctrl+b"),
		PageDown:  b("page down", "pgdown", "ctrl+f", " "),
		Top:       b("first", "home", "g"),
		Bottom:    b("last", "end", "G"),
		NextPane:  b("next pane", "tab"),
		PrevPane:  b("previous pane", "shift+tab"),
		Escape:    b("clear filter", "esc"),
		Spawn:     b("spawn", "s"),
		Filter:    b("filter", "/"),
		Help:      b("all keys", "?"),
		Quit:      b("quit", "q", "ctrl+c"),
		Notices:   b("notices", "N"),
		Interrupt: b("quit", "ctrl+c"),
		Close:     b("close", "esc", "q"),
		Plans: PlanKeys{
			PrevLane:    b("previous lane", "left", "["),
			NextLane:    b("next lane", "right", "]"),
			Preview:     b("preview", "enter"),
			PreviewUp:   b("scroll preview up", "ctrl+u"),
			PreviewDown: b("scroll preview down", "ctrl+d"),
			Promote:     b("promote", "p"),
			Park:        b("park", "a"),
			Return:      b("return", "u"),
			Release:     b("release", "r"),
			Recover:     b("recover", "R"),
			Complete:    b("complete", "c"),
			Diff:        b("diff", "d"),
			New:         b("new plan", "n"),
			Edit:        b("edit", "e"),
		},
		Leases:  LeaseKeys{Release: b("release", "r"), Recover: b("recover", "R"), Open: b("open", "enter")},
		Trees:   TreeKeys{Diff: b("diff", "d"), Open: b("open", "enter")},
		Workers: WorkerKeys{Stop: b("stop", "x"), Pause: b("pause/resume", "p"), Mark: key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "mark for logs")), Logs: b("logs", "l"), Diff: b("diff", "d"), Open: b("open", "enter"), Tell: b("tell", "t"), Interrupt: b("interrupt turn", "i")},
		Events:  EventKeys{Open: b("open", "enter")},
		Merge: MergeKeys{
			Approve: b("approve", "A"), NeedsWork: b("needs work", "X"), Peer: b("peer review", "v"),
			Add: b("queue", "+"), Remove: b("unqueue", "-"), Land: b("land head", "m"),
			Open: b("open", "enter"), Diff: b("diff", "d"), Accept: b("accept move", "a"),
			Browse: b("open PR", "o"), Sync: b("read forge", "r"),
		},
		Inbox: InboxKeys{
			Approve: b("approve plan", "A"), Reject: b("reject plan", "X"), Open: b("read", "enter"), Allow: b("allow", "y"), Deny: b("deny", "n"),
			Extend: b("extend budget", "b"), Stop: b("stop run", "x"), Resume: b("resume run", "p"), Dismiss: b("dismiss comments", "D"),
		},
		Fleet: FleetKeys{Open: b("open tier", "enter")},
		Logs: LogKeys{
			Wrap: b("wrap lines", "w"), Zoom: b("zoom", "z"),
			Left:  key.NewBinding(key.WithKeys("left"), key.WithHelp("←", "scroll left")),
			Right: key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "scroll right")),
		},
		Ask: AskKeys{
			Confirm: b("confirm", "enter"), Cancel: b("cancel", "esc", "ctrl+c"),
			Next: b("next choice", "tab"), Prev: b("previous choice", "shift+tab"),
			Right: b("next choice", "right"), Left: b("previous choice", "left"),
			Yes: b("yes", "y"), No: b("no", "n"),
		},
		Form: FormKeys{
			NextField: b("next field", "tab", "down"), PrevField: b("previous field", "shift+tab", "up"),
			NextValue: b("change", "right", " ", "l"), PrevValue: b("change back", "left", "h"),
		},
	}
}

// Step is how far a moving key goes in a list of n rows shown page at a
// time: -1 or 1, a page, or to either end; ok is false for other keys.
func (k *KeyMap) Step(msg tea.KeyMsg, page, n int) (d int, ok bool) {
	switch {
	case key.Matches(msg, k.Up):
		return -1, true
	case key.Matches(msg, k.Down):
		return 1, true
	case key.Matches(msg, k.PageUp):
		return -page, true
	case key.Matches(msg, k.PageDown):
		return page, true
	case key.Matches(msg, k.Top):
		return -n, true
	case key.Matches(msg, k.Bottom):
		return n, true
	}
	return 0, false
}

// ShortHelp is the status line's reminder: the actions that apply now. A
// pane's keys are disabled off it, so a key shows once.
func (k KeyMap) ShortHelp() []key.Binding {
	p, l, w, g, i := &k.Plans, &k.Leases, &k.Workers, &k.Merge, &k.Inbox
	return []key.Binding{i.Allow, i.Deny, i.Approve, i.Reject, i.Extend, i.Resume, i.Stop, i.Dismiss, i.Open, k.Fleet.Open, g.Approve, g.Land, g.Add, g.Remove, g.NeedsWork, g.Peer, g.Diff, g.Browse, g.Sync, g.Open, p.Promote, p.Park, p.Return, p.Release, l.Release, p.Recover, l.Recover, p.Complete,
		p.Diff, k.Trees.Diff, w.Diff, w.Logs, w.Tell, w.Interrupt, w.Pause, w.Stop, w.Mark, l.Open, k.Trees.Open, w.Open, k.Events.Open,
		k.Spawn, p.New, p.Edit, k.Filter, k.Help, k.Quit}
}

// EventKeys are the Events pane's.
type EventKeys struct{ Open key.Binding }

// FleetKeys are the Fleet pane's: a tier's whole line of the report.
type FleetKeys struct{ Open key.Binding }

// InboxKeys are the Inbox pane's: the coordinator's decisions on a
// proposal, and reading it whole; Allow and Deny answer a run waiting
// for input (enter answers it in words or by an option).
type InboxKeys struct{ Approve, Reject, Open, Extend, Stop, Resume, Dismiss, Allow, Deny key.Binding }

// LeaseKeys are the Leases pane's.
type LeaseKeys struct{ Release, Recover, Open key.Binding }

// MergeKeys are the Merge pane's: a person's decisions, the queue, and
// reading a candidate.
type MergeKeys struct {
	Approve, NeedsWork, Peer key.Binding
	Add, Remove, Land        key.Binding
	Open, Diff               key.Binding
	// Accept is the banner's: a move of the integration branch outside
	// the queue taken as the operator's own (queue accept).
	Accept key.Binding
	// Browse opens the candidate's PR; Sync reads the forge now. Both
	// are off, and out of the help, in a project without a forge.
	Browse, Sync key.Binding
}

// PlanKeys are the Plans pane's: lanes, the filter, the preview, the verbs.
type PlanKeys struct {
	PrevLane, NextLane         key.Binding
	Preview                    key.Binding
	PreviewUp, PreviewDown     key.Binding
	Promote, Park, Return      key.Binding
	Release, Recover, Complete key.Binding
	Diff                       key.Binding
	New, Edit                  key.Binding
}

// ProjectKeys move between the projects: back to the overview, the next
// and the previous project; Open opens the overview's selected one.
type ProjectKeys struct{ Overview, Next, Prev, Open key.Binding }

// WorkerKeys are the Workers pane's; Tell and Interrupt talk to a
// running conversation through its driver.
type WorkerKeys struct{ Stop, Pause, Mark, Logs, Diff, Open, Tell, Interrupt key.Binding }

// TreeKeys are the Worktrees pane's.
type TreeKeys struct{ Diff, Open key.Binding }
