package ui

import tea "github.com/charmbracelet/bubbletea"

// refresh runs one request at a time: asked while one runs, it runs once
// more when that one ends, so a burst of changes never queues work (a
// scan, git twice per worktree, a reading of every state file).
type refresh struct{ busy, again bool }

// request starts cmd, or remembers to run once more when busy.
func (r *refresh) request(cmd tea.Cmd) tea.Cmd {
	if r.busy {
		r.again = true
		return nil
	}
	r.busy = true
	return cmd
}

// done ends the running request and reports whether another is due.
func (r *refresh) done() bool {
	again := r.again
	r.busy, r.again = false, false
	return again
}
