package ui

import (
	"fleetwatch/planfs"
)

// Hub is the one owner of a served project's watchers and readings: it
// watches the tree and the workers' state files once, reads each change
// once (the scan and board, worktrees, workers, merge queue, inbox) and
// fans the results out to every session's model. A slow session never
// slows the others: each gets only the newest of what it has not taken yet.
type Hub struct {
	tree *planfs.Tree
}

// NewHub starts watching t for many sessions.
func NewHub(t *planfs.Tree) (*Hub, error) {
	return &Hub{tree: t}, nil // TODO(hub helper)
}

// Close stops the hub's watchers; sessions still open see no more changes.
func (h *Hub) Close() error { return nil }

// StopMsg tells a session's model the server is stopping: it shows Reason
// on its status line and quits.
type StopMsg struct{ Reason string }
