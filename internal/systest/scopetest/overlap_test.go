package scopetest

import (
	"slices"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// Two workers running at once on two plans touch the same file: the radar
// reports the pair and the path, and git merge-tree says whether their
// edits, as they stand in the worktrees, conflict.
func TestOverlapRadar(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, write string
		overlap     bool
		conflict    bool
	}{
		{"different edits", "shared.go=package x // {agent_id}", true, true},
		{"the same line added", "shared.go=package x\n\nfunc Shared() {}", true, false},
		{"different files", "{agent_id}.go=package x", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := project(t, fwtest.Plan{Rel: "features/x.md"}, fwtest.Plan{Rel: "features/y.md"})
			endpoints(t, dir, "", "-write", c.write, "-sleep", "60s")
			stopA := start(t, dir, "a", "--slug", "x")
			stopB := start(t, dir, "b", "--slug", "y")
			var states []look.State
			fwtest.WaitFor(t, "both agents' edits", 40*time.Second, func() bool {
				states, _ = look.ReadStates(dir)
				n := 0
				for _, st := range states {
					if st.State == look.StateRunning && len(st.Touched) > 0 {
						n++
					}
				}
				return n == 2
			})
			got := look.Overlaps(dir, states)
			if !c.overlap {
				if len(got) != 0 {
					t.Fatalf("overlaps %+v", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("overlaps %+v of %+v", got, states)
			}
			o := got[0]
			if o.A != "a" || o.B != "b" || !slices.Equal(o.Paths, []string{"shared.go"}) || !o.Checked || o.Conflict != c.conflict || o.Note != "" {
				t.Errorf("overlap %+v", o)
			}
			if c.conflict && !slices.Equal(o.Conflicts, []string{"shared.go"}) {
				t.Errorf("conflicts %q", o.Conflicts)
			}
			stopA()
			stopB()
		})
	}
}
