package gitclaims

import (
	"errors"
	"testing"
)

// Only git stopping at a linked worktree half made by another process is
// tried again: anything else is the command's own answer.
func TestWorktreeRaceIsTriedAgain(t *testing.T) {
	for msg, want := range map[string]bool{
		"fetch: fatal: failed to read .git/worktrees/w04/commondir: Success": true,
		"fatal: .git/worktrees/w1/gitdir: No such file or directory":         true,
		"! [rejected] refs/fleetwatch/leases/a (stale info)":                 false,
		"fatal: unable to access 'https://x/': Could not resolve host: x":    false,
		"error: failed to push some refs to '/tmp/worktrees/remote.git'":     false,
	} {
		if got := worktreeRace(errors.New(msg)); got != want {
			t.Errorf("worktreeRace(%q) = %v", msg, got)
		}
	}
}
