package ui

import "github.com/charmbracelet/bubbles/key"

// KeyMap is every key the program answers to. Bindings that cannot apply to
// the current selection are disabled, so help lists only what works now.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
	PrevLane, NextLane                      key.Binding
	NextPane, PrevPane                      key.Binding
	Plans, Leases, Worktrees, Workers       key.Binding
	Events                                  key.Binding
	Filter, Escape, Preview                 key.Binding
	PreviewUp, PreviewDown                  key.Binding
	Promote, Park, Return                   key.Binding
	Release, Recover, Complete              key.Binding
	Spawn, Stop, Mark, Logs                 key.Binding
	Help, Quit                              key.Binding
}

// DefaultKeyMap returns the bindings with their help text.
func DefaultKeyMap() KeyMap {
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
		Up:          b("up", "up", "k"),
		Down:        b("down", "down", "j"),
		PageUp:      b("page up", "pgup", "ctrl+b"),
		PageDown:    b("page down", "pgdown", "ctrl+f", " "),
		Top:         b("first", "home", "g"),
		Bottom:      b("last", "end", "G"),
		PrevLane:    b("previous lane", "left", "["),
		NextLane:    b("next lane", "right", "]"),
		NextPane:    b("next pane", "tab"),
		PrevPane:    b("previous pane", "shift+tab"),
		Plans:       b("plans", "1"),
		Leases:      b("leases", "2"),
		Worktrees:   b("worktrees", "3"),
		Workers:     b("workers", "4"),
		Events:      b("events", "5"),
		Filter:      b("filter", "/"),
		Escape:      b("clear filter", "esc"),
		Preview:     b("preview", "enter"),
		PreviewUp:   b("scroll preview up", "ctrl+u"),
		PreviewDown: b("scroll preview down", "ctrl+d"),
		Promote:     b("promote", "p"),
		Park:        b("park", "a"),
		Return:      b("return", "u"),
		Release:     b("release", "r"),
		Recover:     b("recover", "R"),
		Complete:    b("complete", "c"),
		Spawn:       b("spawn", "s"),
		Stop:        b("stop", "x"),
		Mark:        key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "mark for logs")),
		Logs:        b("logs", "l"),
		Help:        b("all keys", "?"),
		Quit:        b("quit", "q", "ctrl+c"),
	}
}

// ShortHelp is the status line's reminder: the actions that apply now.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Promote, k.Park, k.Return, k.Release, k.Recover, k.Complete,
		k.Logs, k.Stop, k.Mark, k.Spawn, k.Filter, k.Help, k.Quit}
}

// FullHelp is what `?` shows, one column per group.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.PrevLane, k.NextLane, k.NextPane, k.Plans, k.Leases, k.Worktrees, k.Workers, k.Events},
		{k.Promote, k.Park, k.Return, k.Release, k.Recover, k.Complete},
		{k.Spawn, k.Stop, k.Mark, k.Logs},
		{k.Filter, k.Preview, k.PreviewDown, k.PreviewUp, k.Help, k.Quit},
	}
}
