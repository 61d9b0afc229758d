package workers

import "time"

// The scope scanner: while a build runs, the driver looks at what the
// change touches (commits since the merge base with the integration
// branch, staged, unstaged and untracked files) and says at once when a
// path is outside the build's scope or under .plans/.

// scanner watches one running build's worktree.
type scanner struct {
	tick *time.Ticker // nil: nothing to scan (no worktree)
}

// newScanner starts watching r's worktree.
func (d *Driver) newScanner(r *running) *scanner {
	return &scanner{} // TODO(scope helper)
}

// due fires when the worktree should be looked at again; nil (never) when
// there is nothing to scan.
func (s *scanner) due() <-chan time.Time {
	if s.tick == nil {
		return nil
	}
	return s.tick.C
}

func (s *scanner) close() {
	if s.tick != nil {
		s.tick.Stop()
	}
}

// scanTick looks at the worktree once while the agent runs; over is true
// when a violation stopped it (the plan parked).
func (d *Driver) scanTick(r *running, s *scanner) (o Outcome, over bool) {
	return o, false // TODO(scope helper)
}

// scanFinal is the look after the agent exits 0, before any move: over is
// true when a violation parked the plan instead.
func (d *Driver) scanFinal(r *running, s *scanner, o Outcome) (Outcome, bool) {
	return o, false // TODO(scope helper)
}
