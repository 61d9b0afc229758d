package cli

import (
	"errors"
	"io"

	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/landing"
	"github.com/fleetwatch/fleetwatch/workers/seat"
)

// exitFor is the exit code an engine error ends a command with:
// exitNothing when the engine found nothing to do now (the queue empty,
// its head not ready, a slug not queued, an agent with nothing to
// remove), so a script tells "not now" from "broken"; else exitError.
func exitFor(err error) int {
	switch {
	case errors.Is(err, landing.ErrEmpty), errors.Is(err, landing.ErrNotReady), errors.Is(err, landing.ErrNotQueued),
		errors.Is(err, seat.ErrNothingToRemove):
		return exitNothing
	}
	return exitError
}

// failErr prints err as the command's one `fleetwatch: ` line, after what
// failed (the command's name; "" when err names it already), and returns
// exitFor(err).
func failErr(stderr io.Writer, what string, err error) int {
	if what == "" {
		return fail(stderr, exitFor(err), "%v", err)
	}
	return fail(stderr, exitFor(err), "%s: %v", what, err)
}

// missingCode is exit 1 for a plan that is simply not there (resolvePlan's
// notFound), else exit 2: work-once's "nothing to do", as anchor's.
func missingCode(err error) int {
	var nf notFound
	if errors.As(err, &nf) {
		return exitNothing
	}
	return exitError
}

// forceHint names --force for an engine refusal it would override; only
// commands that have the flag use it.
func forceHint(err error) string {
	if errors.Is(err, planfs.ErrNotOwner) || errors.Is(err, planfs.ErrNeedsForce) {
		return " (--force overrides)"
	}
	return ""
}
