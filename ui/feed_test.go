package ui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/ui/feed"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// How the tests reach what the feed keeps (feed.go, ui/feed).

// The hub's mailbox and what a session takes from it, by the names the
// tests knew them by.
type (
	mailbox = feed.Mailbox
	hubMsg  = feed.Msgs
)

// waitHubCmd waits for the mailbox's next readings.
func waitHubCmd(mb *mailbox) tea.Cmd { return mb.Wait() }

// subOf is the hub's mailbox a served model reads from; nil for a local one.
func subOf(m *Model) *mailbox {
	if f, ok := m.feed.(*hubFeed); ok {
		return f.mb
	}
	return nil
}

// watcherOf is the tree's watcher a local model reads on; nil for a hub's.
func watcherOf(m *Model) uictx.Source {
	if f, ok := m.feed.(*localFeed); ok {
		return f.watcher
	}
	return nil
}

// statesOf is the state files' watcher of a local model; nil for a hub's.
func statesOf(m *Model) *look.StateWatcher {
	if f, ok := m.feed.(*localFeed); ok {
		return f.states
	}
	return nil
}

// localOf is a local model's feed.
func localOf(m *Model) *localFeed {
	f, _ := m.feed.(*localFeed)
	return f
}
