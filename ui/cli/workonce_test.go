package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"fleetwatch/internal/testkit/fwtest"
	"fleetwatch/model"
	"fleetwatch/planfs"
)

// Stopped between two plans of --max-plans: exit 2 needs its one line on
// stderr like every other exit 2.
func TestReviewRunStoppedBeforeClaimingSaysWhy(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "features/a.md"})
	tree, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tree.Scan()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("SIGTERM"))
	w := &workOnce{maxPlans: 3, ttl: 60}
	var stdout, stderr bytes.Buffer
	code, note := w.claimEach(ctx, tree, snap, model.Worker{AgentID: "w1", Tier: model.Mid}, nil, 0, &stdout, &stderr)
	if code != exitError || !strings.Contains(note, "SIGTERM") || !strings.Contains(stderr.String(), "SIGTERM") || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("code %d note %q stderr %q", code, note, stderr.String())
	}
	if !fwtest.Exists(dir, "features/a.md") {
		t.Error("nothing should be claimed once stopped")
	}
}
