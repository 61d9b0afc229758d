package landtest

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// Two landers started together: one lands, the other is refused at once
// or lands the next head; each change is on dev exactly once.
func TestRacingLandersLandEachHeadOnce(t *testing.T) {
	t.Parallel()
	dir := landProject(t, passCheck)
	tips := map[string]string{}
	for _, slug := range []string{"a", "b"} {
		tips[slug] = feature(t, dir, slug, map[string]string{slug + ".txt": slug + "\n"})
		queued(t, dir, slug)
	}
	raceLanders(t, dir)
	for slug, tip := range tips {
		wantLanded(t, dir, slug, tip)
	}
	if merges := fwtest.GitOut(t, dir, "rev-list", "--count", "--merges", "dev"); merges != "2" {
		t.Errorf("dev has %s merges, want 2", merges)
	}
}
