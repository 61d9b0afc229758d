package cli

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/landing"
	"github.com/fleetwatch/fleetwatch/workers/seat"
)

// The engine's "nothing to do now" answers exit 1 however they are
// wrapped; every other error exits 2, with one `fleetwatch: ` line.
func TestFailErr(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
	}{
		{landing.ErrEmpty, exitNothing},
		{fmt.Errorf("%w: p1 is not approved", landing.ErrNotReady), exitNothing},
		{fmt.Errorf("%w: p1 is not queued", landing.ErrNotQueued), exitNothing},
		{fmt.Errorf("%w for agent %q", seat.ErrNothingToRemove, "a1"), exitNothing},
		{&planfs.PlanError{Rel: "ready/p1.md", Err: planfs.ErrClaimed, Detail: "already claimed by a1"}, exitError},
		{fmt.Errorf("remote origin: ls-remote: %w", claims.ErrUnavailable), exitError},
		{errors.New("disk full\nsecond line"), exitError},
	} {
		var out bytes.Buffer
		if code := failErr(&out, "queue land", tc.err); code != tc.code {
			t.Errorf("%v: exit %d, want %d", tc.err, code, tc.code)
		}
		if got := out.String(); !bytes.HasPrefix(out.Bytes(), []byte("fleetwatch: queue land: ")) || bytes.Count(out.Bytes(), []byte("\n")) != 1 {
			t.Errorf("%v: printed %q, want one fleetwatch: line", tc.err, got)
		}
	}
	var out bytes.Buffer
	failErr(&out, "", landing.ErrEmpty)
	if out.String() != "fleetwatch: the queue is empty\n" {
		t.Errorf("without a name: %q", out.String())
	}
}
